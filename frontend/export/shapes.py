"""Calling an exported function with symbolic dimensions (shape polymorphism).

An export traced with `ShapeDtypeStruct((b, 4), ...)` has a module whose types hold `?`
for `b` (passes/rules/dynamic_shapes.py). A call with concrete arrays:
1. binds each dimension variable from the arguments' shapes and checks every dimension
   and the scope's constraints (a ValueError naming the argument otherwise);
2. calls the polymorphic @main from a new @main of the arguments' static types and runs
   StableHLO's shape refinement, which folds every dynamic shape to a static one; the
   module called is that refined one.
Exports also assert their shapes inside the module, for callers that are not mjax.
JAX: jax/_src/export/shape_poly.py (solving), mlir.refine_polymorphic_shapes.
"""
from __future__ import annotations

from mjax.dialect.shape_poly import SymbolicScope, _evaluate, is_symbolic_dim
from mjax.dialect.types import ShapedArray
from mjax.passes.export_shapes import (add_shape_assertions,  # noqa: F401  (re-exported)
                                       refined_module, scope_of, variables)


def is_polymorphic(avals) -> bool:
    return any(is_symbolic_dim(d) for a in avals for d in a.shape)


def _where(i: int, j: int) -> str:
    return f"args[{i}].shape[{j}]"


def bind_dimension_variables(fun_name: str, in_avals, shapes) -> dict:
    """{variable: value} from the call's argument shapes; ValueError when they do not
    meet the exported shapes or the constraints."""
    env: dict[str, int] = {}
    later = []
    for i, (want, have) in enumerate(zip(in_avals, shapes)):
        for j, (d, n) in enumerate(zip(want.shape, have)):
            single = d._single_variable() if is_symbolic_dim(d) else None
            if single is None:
                later.append((i, j, d, n))
                continue
            name, coeff, const = single
            value, rest = divmod(n - const, coeff)
            if rest or value < 1:
                raise ValueError(
                    f"Dimension variable '{name}' of '{fun_name}' must have an integer value "
                    f">= 1. Found {(n - const) / coeff:g} when solving {d} == {_where(i, j)} "
                    f"(= {n})")
            env.setdefault(name, value)     # (a second reading is checked below)
            later.append((i, j, d, n))
    for i, j, d, n in later:
        try:
            value = _evaluate(d, env)
        except KeyError as e:
            raise ValueError(f"Cannot solve for the dimension variable {e} of '{fun_name}': "
                             f"mjax reads each variable off an argument dimension that is "
                             f"the variable alone, or k*variable + c") from None
        if not is_symbolic_dim(d) and value != n:
            raise ValueError(f"Shape mismatch for {_where(i, j)} of '{fun_name}' (expected "
                             f"same constant): expected {d} and called with {n}")
        if value != n:
            raise ValueError(
                f"Input shapes do not match the polymorphic shapes specification of "
                f"'{fun_name}'. Found inconsistency between dimension size {_where(i, j)} "
                f"(= {n}) and the specification '{d}' (= {value})")
    scope = scope_of(in_avals)
    if scope is not None:
        _check_constraints(fun_name, scope, env)
    return env


def _check_constraints(fun_name: str, scope: SymbolicScope, env: dict) -> None:
    for name, (lo, hi) in scope._bounds.items():
        if name in env and not lo <= env[name] <= hi:
            raise ValueError(f"Dimension variable '{name}' of '{fun_name}' is {env[name]}, "
                             f"out of the range [{lo}, {hi}] its constraints "
                             f"{list(scope._constraints_str)} allow")
    for e, kind in scope._facts:
        if not variables(e) <= env.keys():
            continue
        value = _evaluate(e, env)
        if (value != 0) if kind == "==" else (value < 0):
            raise ValueError(f"The call of '{fun_name}' with {env} does not meet the "
                             f"symbolic constraints {list(scope._constraints_str)}")


def check_solvable(in_avals) -> None:
    """Each dimension variable must be the whole of some argument dimension, up to
    k*v + c (JAX solves linear univariate equations too): ValueError otherwise."""
    solvable, specs, unsolved = set(), [], {}
    for i, a in enumerate(in_avals):
        if any(map(is_symbolic_dim, a.shape)):
            specs.append(f"args[{i}].shape = ({', '.join(map(str, a.shape))})")
        for j, d in enumerate(a.shape):
            if not is_symbolic_dim(d):
                continue
            single = d._single_variable()
            if single is not None:
                solvable.add(single[0])
            else:
                unsolved.setdefault(d, f"args[{i}].shape[{j}]")
    missing = sorted(set().union(*map(variables, unsolved)) - solvable) if unsolved else []
    if missing:
        raise ValueError(
            f"Cannot solve for values of dimension variables {set(missing)}. We can only "
            f"solve linear uni-variate constraints. Using the following polymorphic shapes "
            f"specifications: {', '.join(specs)}. Unprocessed specifications: "
            + ", ".join(f"'{d}' for dimension size {w}" for d, w in unsolved.items()) + ".")


def concrete_avals(avals, env: dict) -> list[ShapedArray]:
    return [ShapedArray(tuple(_evaluate(d, env) for d in a.shape), a.dtype, a.weak_type)
            for a in avals]
