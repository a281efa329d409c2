"""Autodiff of the reductions and indexing families end to end (IR -> expand transforms ->
XLA), against `jax` (test-only oracle) and finite differences: value, JVP, VJP, the dot
identity <ct, J t> == <J^T ct, t>, and second order (jvp of jvp, vjp of vjp).

Uses the batching harness of test_autodiff_passes.py: every case of a family is one
module and one XLA compile.
"""
from __future__ import annotations

import numpy as np
import pytest
from jaxlib.mlir import ir

from mjax.dialect import context
from mjax.passes import PassError, run_pipeline

# jax_x64: the module-scoped autouse fixture that turns the oracle's x64 on (imported, it
# applies to this module too).
from test_autodiff_passes import (Case, attr_text, check_cases, compile_and_run, ttype, u,  # noqa: F401
                                  RNG, jax_x64)

import jax  # noqa: E402  (the test-only oracle: missing, these tests fail)
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402


class MultiCase(Case):
    """A multi-result op (sort) of which the function returns result `result`."""

    def __init__(self, op, jax_fn, *args, result, **kw):
        self.result = result
        super().__init__(op, jax_fn, *args, **kw)
        self.id += f"_result{result}"

    def fn_text(self, name):
        ins = ", ".join(f"%a{i}: {ttype(a)}" for i, a in enumerate(self.args))
        operands = ", ".join(f"%a{i}" for i in range(len(self.args)))
        types = ", ".join(ttype(a) for a in self.args)
        n = len(self.args)
        ot = ttype(self.out)
        return (f"func.func private @{name}({ins}) -> {ot} {{\n"
                f"  %0:{n} = \"jaxpr.{self.op}\"({operands}) {attr_text(self.params)} : "
                f"({types}) -> ({types})\n  return %0#{self.result} : {ot}\n}}\n")


def distinct(*shape, lo=0.2, hi=0.9):
    """Values in [lo, hi] with no ties (so max/sort derivatives are well defined)."""
    n = int(np.prod(shape))
    return RNG.permutation(np.linspace(lo, hi, n)).reshape(shape)


# ---- reductions ------------------------------------------------------------------------
def reduction_cases():
    with_zero = u(3, 4)
    with_zero[1, 2] = 0.0
    two_zeros = u(2, 5)
    two_zeros[0, 1] = two_zeros[0, 3] = 0.0
    ties = np.array([[0.5, 0.7, 0.7], [0.3, 0.3, 0.3]])
    cum_ties = np.array([[0.4, 0.4, 0.2, 0.9, 0.9, 0.9], [0.6, 0.1, 0.6, 0.6, 0.2, 0.8]])
    cum_zero = u(2, 6)
    cum_zero[0, 2] = 0.0
    cases = [
        Case("reduce_prod", lambda a: jnp.prod(a, axis=1), u(3, 4), params={"axes": (1,)}),
        Case("reduce_prod", lambda a: jnp.prod(a, axis=1), with_zero, params={"axes": (1,)}),
        Case("reduce_prod", lambda a: jnp.prod(a, axis=1), two_zeros, params={"axes": (1,)}),
        Case("reduce_prod", lambda a: jnp.prod(a, axis=(0, 2)), u(3, 2, 5),
             params={"axes": (0, 2)}, second_order=False),
        Case("reduce_prod", lambda a: jnp.prod(a), u(7), params={"axes": (0,)},
             second_order=False),
        Case("reduce_max", lambda a: jnp.max(a, axis=1), ties, params={"axes": (1,)}, fd=False),
        Case("reduce_min", lambda a: jnp.min(a, axis=(0, 1)), ties, params={"axes": (0, 1)},
             fd=False, second_order=False),
        Case("reduce_max", lambda a: jnp.max(a, axis=0), distinct(4, 3), params={"axes": (0,)},
             second_order=False),
    ]
    # Lengths 1, 5 (odd, then 2: nothing left over) and 6 (even, then 3: odd) take every
    # branch of the scan. Few shapes and second order on one length per op: the jax
    # oracle compiles every primitive per shape.
    for op in ("cumprod", "cummax", "cummin", "cumlogsumexp"):
        f = getattr(lax, op)
        for n in (1, 5, 6):
            cases.append(Case(op, lambda a, f=f: f(a, axis=1), distinct(2, n),
                              params={"axis": 1, "reverse": False}, second_order=n == 5))
        cases.append(Case(op, lambda a, f=f: f(a, axis=0, reverse=True), distinct(6, 2),
                          params={"axis": 0, "reverse": True}, second_order=False))
    cases.append(Case("cumprod", lambda a: lax.cumprod(a, axis=1), cum_zero,
                      params={"axis": 1, "reverse": False}))
    for op in ("cummax", "cummin"):  # ties split as in JAX's associative scan
        f = getattr(lax, op)
        for reverse in (False, True):
            cases.append(Case(op, lambda a, f=f, r=reverse: f(a, axis=1, reverse=r), cum_ties,
                              params={"axis": 1, "reverse": reverse}, fd=False,
                              second_order=False))
    cases.append(Case("cumlogsumexp", lambda a: lax.cumlogsumexp(a, axis=1),
                      distinct(2, 6, lo=-30.0, hi=40.0), params={"axis": 1, "reverse": False},
                      second_order=False))
    return cases


def sort_cases():
    keys = distinct(3, 5)
    vals = u(3, 5)
    ints = RNG.permutation(15).reshape(3, 5).astype(np.int32)
    dup_keys = np.array([[0.3, 0.1, 0.3, 0.2], [0.5, 0.5, 0.5, 0.4]])
    return [
        Case("sort", lambda a: lax.sort(a), distinct(6), params={"dimension": 0}),
        Case("sort", lambda a: lax.sort(a, dimension=0), keys, params={"dimension": 0}),
        Case("sort", lambda a: lax.sort(a, dimension=1), keys, params={"dimension": 1}),
        MultiCase("sort", lambda k, v: lax.sort((k, v), dimension=1, num_keys=1)[1],
                  keys, vals, params={"dimension": 1, "num_keys": 1}, result=1),
        MultiCase("sort", lambda k, v: lax.sort((k, v), dimension=1, num_keys=1)[0],
                  keys, vals, params={"dimension": 1, "num_keys": 1}, result=0),
        # integer keys carry no tangent; the float operand follows their permutation
        MultiCase("sort", lambda k, v: lax.sort((k, v), dimension=0, num_keys=1)[1],
                  ints, vals, params={"dimension": 0, "num_keys": 1}, result=1),
        # equal keys, stable: values move with their keys, ties keep their order (keys'
        # finite differences would reorder the ties)
        MultiCase("sort", lambda k, v: lax.sort((k, v), dimension=1, num_keys=1)[1],
                  dup_keys, u(2, 4), params={"dimension": 1, "num_keys": 1}, result=1,
                  fd=False),
        MultiCase("sort", lambda k, v: lax.sort((k, v), dimension=1, num_keys=2)[1],
                  dup_keys, u(2, 4), params={"dimension": 1, "num_keys": 2}, result=1,
                  fd=False),
    ]


def test_reduction_derivatives():
    check_cases(reduction_cases() + sort_cases())


# ---- gather / scatter ----------------------------------------------------------------------
def gdn(offset, collapsed, start_map, obatch=(), ibatch=()):
    return {"offset_dims": offset, "collapsed_slice_dims": collapsed,
            "start_index_map": start_map, "operand_batching_dims": obatch,
            "start_indices_batching_dims": ibatch}


def sdn(window, inserted, to_operand, obatch=(), ibatch=()):
    return {"update_window_dims": window, "inserted_window_dims": inserted,
            "scatter_dims_to_operand_dims": to_operand, "operand_batching_dims": obatch,
            "scatter_indices_batching_dims": ibatch}


def gather_case(x, idx, dn, sizes, mode, unique=False, fill_value=None, **kw):
    def f(a, i):
        return lax.gather(a, i, lax.GatherDimensionNumbers(**dn), sizes, mode=mode,
                          unique_indices=unique, fill_value=fill_value)
    params = {"dimension_numbers": dn, "slice_sizes": sizes, "mode": mode,
              "unique_indices": unique}
    if fill_value is not None:
        params["fill_value"] = fill_value
    return Case("gather", f, x, idx, params=params, **kw)


def scatter_case(op, x, idx, upd, dn, mode, unique=False, clamp_for_jax=False, **kw):
    fn = getattr(lax, op)

    def f(a, i, v):
        if clamp_for_jax:
            # JAX's JVP of scatter_min/max reads the updated windows back with "fill"
            # gathers even in clip mode (NaN tangents for clamped updates); the oracle
            # clamps the (row) indices itself, which is what "clip" means.
            assert dn == ROW_UPDATES
            i = np.clip(i, 0, a.shape[0] - 1)
        return fn(a, i, v, lax.ScatterDimensionNumbers(**dn),
                  mode="promise_in_bounds" if clamp_for_jax else mode, unique_indices=unique)
    return Case(op, f, x, idx, upd, params={"dimension_numbers": dn, "mode": mode,
                                            "unique_indices": unique}, **kw)


ROWS = gdn((1,), (0,), (0,))        # x[i] for x of shape (n, m): whole rows
ROW_UPDATES = sdn((1,), (0,), (0,))


def idx(*values):
    return np.array(values, np.int32).reshape(-1, 1)


def gather_cases():
    x = u(5, 3)
    windows = gdn((1, 2), (), (0, 1))  # 2x2 windows at 2-D starts
    take_along = gdn((), (1,), (1,), (0,), (0,))  # x[b, i[b, k]] via batching dims
    return [
        gather_case(x, idx(4, 0, 4, 2), ROWS, (1, 3), "promise_in_bounds"),
        gather_case(x, idx(1, 3), ROWS, (1, 3), "promise_in_bounds", unique=True),
        gather_case(x, idx(6, -1, 2, 4), ROWS, (1, 3), "clip"),
        gather_case(x, idx(6, -1, 2, 4, 2), ROWS, (1, 3), "fill", fill_value=0.5),
        gather_case(x, idx(6, -1, 2, 4, 2), ROWS, (1, 3), "fill", fd=False),  # NaN fill
        gather_case(u(4, 5), np.array([[0, 1], [2, 3], [3, 3], [1, 0]], np.int32), windows,
                    (2, 2), "fill", fill_value=-1.0),
        gather_case(u(4, 5), np.array([[0, 1], [5, 3], [-1, 0]], np.int32), windows,
                    (2, 2), "clip"),
        gather_case(u(3, 4), np.array([[[0], [3], [3]], [[1], [1], [2]], [[2], [0], [1]]],
                                      np.int32), take_along, (1, 1), "promise_in_bounds"),
    ]


def scatter_cases():
    x = u(5, 3)
    upd4 = u(4, 3)
    dup = idx(4, 0, 4, 2)
    cases = []
    for op in ("scatter_add", "scatter"):
        cases += [
            scatter_case(op, x, dup, upd4, ROW_UPDATES, "fill"),
            scatter_case(op, x, idx(1, 6, -1, 3), upd4, ROW_UPDATES, "fill"),
            scatter_case(op, x, idx(0, 3, 2, 4), upd4, ROW_UPDATES, "promise_in_bounds",
                         unique=True),
            scatter_case(op, x, idx(6, 0, -3, 2), upd4, ROW_UPDATES, "fill", unique=True),
            scatter_case(op, u(4, 5), np.array([[0, 1], [2, 3], [1, 2]], np.int32),
                         u(3, 2, 2), sdn((1, 2), (), (0, 1)), "fill"),
        ]
    for op in ("scatter_add", "scatter"):
        cases.append(scatter_case(op, x, idx(6, -1, 2, 2), upd4, ROW_UPDATES, "clip"))
    cases.append(scatter_case("scatter", x, idx(6, -1, 2, 3), upd4, ROW_UPDATES, "clip",
                              unique=True))
    cases.append(scatter_case("scatter_mul", x, idx(0, 3, 2, 4), upd4, ROW_UPDATES,
                              "promise_in_bounds", unique=True))
    cases.append(scatter_case("scatter_mul", x, idx(0, 6, 2, -4), upd4, ROW_UPDATES, "fill",
                              unique=True))
    # scatter_min/max: distinct values (so finite differences see the JVP), then ties
    # between updates and with the operand, where JAX averages the tangents.
    xd, ud = distinct(5, 3), distinct(4, 3, lo=0.05, hi=1.05)
    tie_x = np.array([[0.5, 0.2], [0.1, 0.4], [0.3, 0.3]])
    tie_u = np.array([[0.5, 0.6], [0.5, 0.1], [0.7, 0.4], [0.7, 0.0]])
    tie_i = idx(0, 0, 1, 1)
    for op in ("scatter_max", "scatter_min"):
        cases += [scatter_case(op, xd, dup, ud, ROW_UPDATES, "fill"),
                  scatter_case(op, xd, idx(1, 6, -1, 3), ud, ROW_UPDATES, "fill"),
                  scatter_case(op, xd, idx(6, 0, -3, 2), ud, ROW_UPDATES, "clip",
                               clamp_for_jax=True),
                  scatter_case(op, tie_x, tie_i, tie_u, ROW_UPDATES, "fill", fd=False)]
    return cases


def test_gather_scatter_derivatives():
    check_cases(gather_cases() + scatter_cases())


# ---- errors where JAX raises too; integer results ---------------------------------------
def _scatter_mul_module(unique: bool, diff_args: tuple[int, ...]) -> str:
    dn = attr_text({"dimension_numbers": ROW_UPDATES, "unique_indices": unique,
                    "mode": "fill"})
    x, i, v = "tensor<5x3xf64>", "tensor<4x1xi32>", "tensor<4x3xf64>"
    cts = ", ".join([x, i, v][a] for a in diff_args)
    results = ", ".join(f"%0#{k}" for k in range(len(diff_args)))
    return f"""
func.func private @f(%x: {x}, %i: {i}, %v: {v}) -> {x} {{
  %0 = "jaxpr.scatter_mul"(%x, %i, %v) {dn} : ({x}, {i}, {v}) -> {x}
  return %0 : {x}
}}
func.func @main(%x: {x}, %i: {i}, %v: {v}, %ct: {x}) -> ({cts}) {{
  %0:{len(diff_args)} = "jaxpr.vjp"(%x, %i, %v, %ct) {{callee = @f, diff_args = array<i64: {", ".join(map(str, diff_args))}>}} : ({x}, {i}, {v}, {x}) -> ({cts})
  return {results} : {cts}
}}
"""


def test_scatter_mul_repeated_indices():
    # d/d operand is fine with repeated indices; d/d updates needs unique_indices (as JAX).
    x, v, ct = u(5, 3), u(4, 3), u(5, 3)
    i = idx(4, 0, 4, 2)
    got, = compile_and_run(_scatter_mul_module(False, (0,)), x, i, v, ct)
    dn = lax.ScatterDimensionNumbers(**ROW_UPDATES)
    want = jax.vjp(lambda a: lax.scatter_mul(a, i, v, dn), x)[1](ct)[0]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        module = ir.Module.parse(_scatter_mul_module(False, (0, 2)))
        with pytest.raises(PassError, match="scatter_mul with respect to its updates unless "
                                            "unique_indices=True"):
            run_pipeline(module, "builtin.module(jaxpr-expand-transforms)")


ARGMAX = """
func.func private @f(%x: tensor<5xf64>) -> tensor<1xf64> {
  %i = "jaxpr.argmax"(%x) {axes = array<i64: 0>, index_dtype = i32} : (tensor<5xf64>) -> tensor<i32>
  %0 = "jaxpr.dynamic_slice"(%x, %i) {slice_sizes = array<i64: 1>} : (tensor<5xf64>, tensor<i32>) -> tensor<1xf64>
  %s = "jaxpr.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<5xf64>) -> tensor<f64>
  %b = "jaxpr.broadcast_in_dim"(%s) {shape = array<i64: 5>, broadcast_dimensions = array<i64>} : (tensor<f64>) -> tensor<5xf64>
  %g = "jaxpr.gt"(%x, %b) : (tensor<5xf64>, tensor<5xf64>) -> tensor<5xi1>
  %any = "jaxpr.reduce_or"(%g) {axes = array<i64: 0>} : (tensor<5xi1>) -> tensor<i1>
  %k = "jaxpr.argmin"(%x) {axes = array<i64: 0>, index_dtype = i32} : (tensor<5xf64>) -> tensor<i32>
  %1 = "jaxpr.dynamic_update_slice"(%0, %0, %k) : (tensor<1xf64>, tensor<1xf64>, tensor<i32>) -> tensor<1xf64>
  %2 = "jaxpr.mul"(%1, %1) : (tensor<1xf64>, tensor<1xf64>) -> tensor<1xf64>
  return %2 : tensor<1xf64>
}
func.func @main(%x: tensor<5xf64>, %ct: tensor<1xf64>) -> tensor<5xf64> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @f} : (tensor<5xf64>, tensor<1xf64>) -> tensor<5xf64>
  return %0 : tensor<5xf64>
}
"""


def test_integer_results_carry_no_tangent():
    # argmax/argmin/reduce_or results are integers: gradients flow only through the values
    # they select (dynamic_update_slice clamps the argmin start to 0 here).
    x = np.array([0.3, 0.9, -0.2, 0.5, 0.1])
    ct = np.array([1.5])
    got, = compile_and_run(ARGMAX, x, ct)

    def f(a):
        s = lax.dynamic_slice(a, (jnp.argmax(a),), (1,))
        s = lax.dynamic_update_slice(s, s, (jnp.argmin(a),))
        return s * s
    np.testing.assert_allclose(got, jax.vjp(f, x)[1](ct)[0], rtol=1e-12)
    assert got[1] == pytest.approx(2 * 0.9 * 1.5)
