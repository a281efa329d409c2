"""The speed-ups of issue #25 make the same IR as the general paths they bypass: a
reduction's direct construction, the fast rewrites of reshape/squeeze/expand_dims/
transpose, the Builder's direct jaxpr.constant, and lower_custom_calls' skip when no
custom call was met. Each is compared, op for op and location for location, with the
path it replaces."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

import mjax
import mjax.extend.core as mjax_extend_core
import mjax.numpy as jnp
from mjax import core as mjax_core
from mjax.dialect import Builder, context
from mjax.dialect import builder as builder_mod
from mjax.dialect.ops import structural as S
from mjax.dialect.types import ShapedArray
from mjax.interpreters import ad as mjax_ad
from mjax.interpreters import mlir as mjax_mlir
from mjax.passes import jaxpr_to_stablehlo as J
from mjax.passes.rules import hlo as H
from mjax.passes.rules import reductions as R


class _Ctx:
    def __init__(self, aval_in, aval_out):
        self.avals_in, self.avals_out = [aval_in], [aval_out]


def _module_text(build, dtype=np.float32) -> str:
    """A module of one function taking a (3, 4) array of dtype, its body made by
    `build(block)`, in generic form with locations."""
    with context(), ir.Location.name("here"):
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp("f", ([H.ttype((3, 4), np.dtype(dtype))], []))
            block = fn.add_entry_block()
        with ir.InsertionPoint(block):
            build(block)
            func.ReturnOp([])
        return module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)


_KINDS = ["add", "mul", "max", "min", "and", "or", "xor"]
_DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.float64, np.int32, np.int8,
           np.uint8, np.uint32, np.bool_, np.complex64]


@pytest.mark.parametrize("dtype", _DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", _KINDS)
def test_reduce_direct_same_as_builders(kind, dtype):
    dtype = np.dtype(dtype)
    if kind in ("and", "or", "xor") and not (dtype.kind in "iub"):
        pytest.skip("bitwise reductions take integers and booleans")

    def text(direct):
        def body(block):
            x = block.arguments[0]
            if direct:
                R._reduce_lower(_Ctx(ShapedArray((3, 4), dtype), ShapedArray((3,), dtype)),
                                x, axes=(1,), kind=kind)
            else:
                init = H.constant(R.identity(kind, dtype), dtype)
                fn = R.combiner(kind, dtype)
                H.scalar_reduce([H.ttype((3,), dtype)], [x], [init], [1],
                                lambda a, b: [fn(a, b)])
        return _module_text(body, dtype)
    assert "stablehlo.reduce" in text(True)
    assert text(True) == text(False)


def _lm_like(x, w):
    h = jnp.tanh(x @ w).reshape(2, 3, 4).transpose(1, 0, 2)
    return jnp.sum(jnp.squeeze(jnp.expand_dims(h, 0), 0) ** 2) + jnp.max(h) - jnp.min(h)


def _lowered_text(f, *args) -> str:
    return mjax.jit(f).lower(*args).compiler_ir("stablehlo").operation.get_asm(
        enable_debug_info=True)


def test_fast_rewrites_and_direct_constants_same_program(monkeypatch):
    x = np.ones((6, 5), np.float32)
    w = np.ones((5, 4), np.float32)
    step = lambda x, w: mjax.grad(_lm_like, argnums=(0, 1))(x, w)  # noqa: E731
    fast = _lowered_text(step, x, w)
    table = J._fast_rules()
    for cls in (S.ReshapeOp, S.SqueezeOp, S.ExpandDimsOp, S.TransposeOp):
        monkeypatch.delitem(table, cls)
    monkeypatch.setattr(R, "_COMBINER_OP", {})
    monkeypatch.setattr(builder_mod.Builder, "_constant", lambda self, params: None)
    assert _lowered_text(step, x, w) == fast


@pytest.mark.parametrize("value", [np.zeros((), np.float32), np.ones((3, 4), np.int32),
                                   np.broadcast_to(np.float16(2), (5, 6)),
                                   np.arange(6.0).reshape(2, 3), np.array(True),
                                   np.zeros((2,), ml_dtypes.bfloat16)])
def test_builder_constant_same_op(value):
    def build(direct):
        def body(block):
            b = Builder(ir.InsertionPoint(block), ir.Location.name("c"))
            if not direct:
                b._constant = lambda params: None
            b.emit("constant", value=value)
        return _module_text(body)
    assert build(True) == build(False)


def test_custom_calls_still_lowered_after_a_grad():
    # a custom_jvp function under grad, and one left outside differentiation: both
    # expansions (skip or not) must leave no custom call for lowering to refuse
    @mjax.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return jnp.sin(x), 2.0 * jnp.cos(x) * t

    def g(x):
        return mjax.grad(lambda y: jnp.sum(f(y)))(x) + f(x)

    x = np.linspace(0.1, 1.0, 4).astype(np.float32)
    got = np.asarray(mjax.jit(g)(x))
    np.testing.assert_allclose(got, 2.0 * np.cos(x) + np.sin(x), rtol=1e-6)


def test_custom_call_in_a_primitives_traced_jvp_rule_is_lowered():
    # The function differentiated holds no custom call (expansion meets none), but the
    # user primitive's JVP rule, traced during expansion, calls a custom_jvp function:
    # lower_custom_calls must still run on what the rule brought in.
    @mjax.custom_jvp
    def double(t):
        return 2.0 * t

    @double.defjvp
    def double_jvp(primals, tangents):
        return double(*primals), 2.0 * tangents[0]

    p = mjax_extend_core.Primitive("sin_with_custom_jvp_rule")
    p.def_impl(lambda x: np.sin(x))
    p.def_abstract_eval(lambda xs: mjax_core.ShapedArray(xs.shape, xs.dtype))
    mjax_mlir.register_lowering(p, mjax_mlir.lower_fun(jnp.sin, multiple_results=False))

    def jvp_rule(primals, tangents):
        (x,), (t,) = primals, tangents
        return p.bind(x), 0.5 * double(jnp.cos(x) * mjax_ad.instantiate_zeros(t))
    mjax_ad.primitive_jvps[p] = jvp_rule

    x = np.linspace(0.1, 1.0, 4).astype(np.float32)
    t = np.full(4, 3.0, np.float32)
    y, ty = mjax.jit(lambda x, t: mjax.jvp(p.bind, (x,), (t,)))(x, t)
    np.testing.assert_allclose(np.asarray(y), np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ty), 3.0 * np.cos(x), rtol=1e-6)
