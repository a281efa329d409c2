"""How a `jaxpr.*` op is defined.

The bindings cannot register a C++ dialect, so `jaxpr` ops are unregistered ops given
structure in Python: one `ir.OpView` subclass per op, registered so that `op.opview`
(and iteration over a block) returns it. A class declares

- `num_operands` (an int, or None for variadic with `min_operands`),
- `attributes`: name -> AttrKind (JAX's parameter names, with Python types),
- `num_regions`,
- `infer(*avals, **params) -> tuple[ShapedArray, ...]`: the one inference rule, called
  by the tracer while tracing and by `--jaxpr-verify` on parsed IR.

    class SinOp(ElementwiseUnary, name="sin"):
        '''Elementwise sine. JAX: lax.sin_p.'''
"""
from __future__ import annotations

import sys
import types

import numpy as np

from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _mlir

from mjax.dialect import attributes as A
from mjax.dialect.types import RefAval, ShapedArray, aval_of, tensor_type

OPS: dict[str, type["JaxprOp"]] = {}
_INFERRED: dict = {}   # (op class, operand types, [params,] *operand avals) -> result avals
# The modules whose ops' rules are pure functions of avals and parameters (no function
# table, handle or callback behind them): their inferences are cached.
PURE_SHAPE_RULES = frozenset({"mjax.dialect.ops.structural", "mjax.dialect.ops.reductions",
                               "mjax.dialect.ops.elementwise"})
# Modules of ops on array values only: a ref (a memref operand) given to one of them is
# the user's mistake of not reading it first (JAX's error), not a program to build.
_ARRAYS_ONLY = PURE_SHAPE_RULES | {f"mjax.dialect.ops.{m}" for m in (
    "indexing", "convolution", "windowed", "sorting", "linalg", "region_reductions",
    "random")}


def _plain(v) -> bool:
    """An int, bool, str, None, NumPy dtype, or a tuple of those (at any depth)."""
    t = type(v)
    if t is int or t is bool or t is str or v is None:
        return True
    if t is tuple:
        return all(map(_plain, v))
    return isinstance(v, np.dtype)


_PARAMS: dict = {}   # (op class, its attributes) -> checked params made of immutable parts


def encode_params(params: dict) -> dict:
    """Checked parameters as the op's attributes (None values left out)."""
    return {k: A.encode(v) for k, v in params.items() if v is not None}


class InferError(TypeError):
    """An op's operands or attributes break its rules (shape, dtype, attribute range)."""


class InferValueError(InferError, ValueError):
    """An InferError from a rule that raises JAX's ValueError (a value out of range, such
    as an axis): both classes, so either `except` catches it."""


class _JaxprDialect(ir.Dialect):
    DIALECT_NAMESPACE = "jaxpr"


_mlir.register_dialect(_JaxprDialect)

# When asked for `op.opview`, the bindings import `<search prefix>.jaxpr` for the
# dialect's Python module (jaxlib.mlir.dialects.jaxpr, then jaxlib.mosaic..., then
# jax.jaxlib..., which would import jax itself), and retry on every op when that fails.
# Our ops are registered above, so a placeholder module ends the search at once.
_placeholder = types.ModuleType("jaxlib.mlir.dialects.jaxpr",
                                "Placeholder: jaxpr ops are defined in mjax.dialect.")
sys.modules.setdefault("jaxlib.mlir.dialects.jaxpr", _placeholder)


# JAX's primitive names that are not the op's: a nested jit is JAX's jit primitive, its
# scatters' names have a hyphen, checkpoint_name's primitive is `name`.
JAX_NAMES = {"call": "jit", "checkpoint_name": "name",
             **{f"scatter_{k}": f"scatter-{k}" for k in ("add", "mul", "min", "max", "sub")}}


class JaxprOp(ir.OpView):
    """Base of every `jaxpr.*` op class. Subclass with `name=` to define an op."""

    _ODS_REGIONS = (0, True)
    primitive: str = ""
    jax_name: str = ""      # JAX's name of the primitive (jaxprs and HLO op names show it)
    num_operands: int | None = 1
    min_operands: int = 0
    attributes: dict[str, A.AttrKind] = {}
    num_regions: int | None = 0  # None: varies per op (checked by the op's infer_at)
    # Op lowers to nothing with side effects; DCE and CSE may remove/merge it.
    pure: bool = True
    # JAX's weak-type rule: the results are weakly typed when every operand in this slice
    # is (whatever the result dtype: `~f32 < ~f32` is `~bool`); None: never weak. The
    # tracer asks `weak_result`; weak types never reach the IR.
    weak_type_inputs: slice | None = slice(None)

    def __init_subclass__(cls, name: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if name is None:
            return
        cls.primitive = name
        cls.jax_name = JAX_NAMES.get(name, name)
        cls.OPERATION_NAME = "jaxpr." + name
        if cls.OPERATION_NAME in OPS:
            raise ValueError(f"op {cls.OPERATION_NAME} defined twice")
        _mlir.register_operation(_JaxprDialect)(cls)
        OPS[cls.OPERATION_NAME] = cls

    # ---- rules a subclass provides -------------------------------------------
    @classmethod
    def infer(cls, *avals: ShapedArray, **params) -> tuple[ShapedArray, ...]:
        raise NotImplementedError(f"{cls.OPERATION_NAME} has no inference rule")

    # ---- shared machinery ------------------------------------------------------
    @classmethod
    def weak_result(cls, avals_in) -> bool:
        """Whether the results of this op on operands `avals_in` are weakly typed."""
        if cls.weak_type_inputs is None:
            return False
        counted = avals_in[cls.weak_type_inputs]
        return bool(counted) and all(a.weak_type for a in counted)

    @classmethod
    def check_operand_count(cls, n: int):
        if cls.num_operands is None:
            if n < cls.min_operands:
                raise InferError(f"'{cls.OPERATION_NAME}' op expects at least "
                                 f"{cls.min_operands} operands, got {n}")
        elif n != cls.num_operands:
            raise InferError(f"'{cls.OPERATION_NAME}' op expects {cls.num_operands} "
                             f"operand{'s' if cls.num_operands != 1 else ''}, got {n}")

    @classmethod
    def check_params(cls, params: dict) -> dict:
        """Fills defaults and validates each attribute against its declared kind."""
        if not cls.attributes and not params:
            return {}       # (most ops: nothing to fill or check)
        unknown = params.keys() - cls.attributes.keys()
        if unknown:
            raise InferError(f"'{cls.OPERATION_NAME}' op got unknown attribute(s) "
                             f"{', '.join(sorted(unknown))}")
        out = {}
        for name, kind in cls.attributes.items():
            if name in params and params[name] is not None:
                try:
                    out[name] = kind.check(cls.OPERATION_NAME, name, params[name])
                except TypeError as e:
                    raise InferError(str(e)) from None
            elif kind.default is A.REQUIRED:
                raise InferError(f"'{cls.OPERATION_NAME}' op requires attribute '{name}'")
            else:
                out[name] = kind.default
        return out

    @classmethod
    def infer_checked(cls, avals, params, *, params_checked: bool = False
                      ) -> tuple[ShapedArray, ...]:
        """Operand count, attribute kinds (unless `params_checked`: they come from
        `check_params`), then the op's own rule; InferError on failure."""
        if not params and not cls.attributes:
            # (Ops without attributes on plain ShapedArrays, most ops of a program: the
            # rule depends on the avals alone, and passes and tracing ask again and again.)
            key = (cls, tuple(map(type, avals)), *avals)
        elif params_checked and cls.__module__ in PURE_SHAPE_RULES and \
                all(map(_plain, params.values())):
            # (Shape rules of structural, reduction and elementwise ops, with checked
            # parameters made of ints, strings, dtypes and tuples of them: the avals and
            # those decide.)
            key = (cls, tuple(map(type, avals)),
                   tuple([(k, type(v), v) for k, v in params.items()]), *avals)
        else:
            return cls._infer_checked(avals, params, params_checked)
        try:
            hit = _INFERRED.get(key)
        except Exception:     # (an unhashable or inconclusive symbolic dimension)
            hit = key = None
        if hit is not None:
            return hit
        out = cls._infer_checked(avals, params, params_checked)
        if key is not None and all(t is ShapedArray for t in key[1]) and \
                all(type(a) is ShapedArray for a in out):
            if len(_INFERRED) >= 4096:
                _INFERRED.clear()
            _INFERRED[key] = out
        return out

    @classmethod
    def _infer_checked(cls, avals, params, params_checked):
        cls.check_operand_count(len(avals))
        if cls.__module__ in _ARRAYS_ONLY:
            for a in avals:
                if type(a) is RefAval:
                    raise InferValueError(
                        f"Attempting to pass a Ref {a} to a primitive: "
                        f"{cls.primitive} -- did you forget to unpack ([...]) the ref?")
        if not params_checked:
            params = cls.check_params(params)
        try:
            return tuple(cls.infer(*avals, **params))
        except InferError:
            raise
        except ValueError as e:
            raise InferValueError(str(e)) from None
        except TypeError as e:
            raise InferError(str(e)) from None

    @classmethod
    def create(cls, operands, result_avals, params, *, loc=None, ip=None,
               num_regions=None) -> ir.Operation:
        """Creates the op with already-checked params and inferred result avals
        (`num_regions` for ops whose region count varies, such as jaxpr.cond)."""
        return ir.Operation.create(
            cls.OPERATION_NAME, results=[tensor_type(result_avals[0])]
            if len(result_avals) == 1 else [tensor_type(a) for a in result_avals],
            operands=operands if type(operands) is list else list(operands),
            attributes=encode_params(params) if params else None,
            regions=cls.num_regions if num_regions is None else num_regions,
            loc=loc, ip=ip)

    @property
    def params(self) -> dict:
        """The op's attributes as Python values, defaults filled in."""
        return type(self).params_of(self.operation)

    @classmethod
    def params_of(cls, op: ir.Operation) -> dict:
        """`op.opview.params` for an op of this class, without making its OpView."""
        if not cls.attributes:
            return {}           # (elementwise ops: nothing to read)
        present = op.attributes.items()
        # Attributes are uniqued in their context, so ops with the same attributes (the
        # same dot, reduction, broadcast again and again) share one decoding: passes ask
        # for params many times, and decoding + checking costs ~15 us an op.
        key = (cls, tuple(present))
        hit = _PARAMS.get(key)
        if hit is not None:
            return dict(hit)
        present = dict(present)
        raw = {}
        for name in cls.attributes:
            if name in present:
                raw[name] = A.decode(present[name])
        params = cls.check_params(raw)
        if all(A.immutable(v) or v is None for v in params.values()):
            if len(_PARAMS) > 4096:
                _PARAMS.clear()
            _PARAMS[key] = params
            return dict(params)
        return params

    @property
    def operand_avals(self) -> list[ShapedArray]:
        return [aval_of(v.type) for v in self.operation.operands]

    @property
    def result_avals(self) -> list[ShapedArray]:
        return [aval_of(r.type) for r in self.operation.results]


def op_class_of(op: ir.Operation) -> type:
    """`type(op.opview)`, without making the OpView of a jaxpr op (its class from its
    name): the passes ask it of every op they transform."""
    cls = OPS.get(op.name)
    return type(op.opview) if cls is None else cls


def op_class(name: str) -> type[JaxprOp]:
    """The class of `jaxpr.<name>` (accepts 'sin' or 'jaxpr.sin')."""
    full = name if name.startswith("jaxpr.") else "jaxpr." + name
    try:
        return OPS[full]
    except KeyError:
        raise KeyError(f"unknown op '{full}'") from None
