"""hijax values in traced programs as JAX shows them (jax.experimental.hijax): traced code
sees a tracer of the hi type (not the value class), jaxprs show one hi-typed variable per
hi value and `call_hi_primitive` equations, and vmap calls a primitive's own `batch`
rule; each checked against JAX (installed as a test-only oracle)."""
from dataclasses import dataclass

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import hijax as jhijax

import mjax
import mjax.numpy as mjnp
from mjax.experimental import hijax as mhijax
from hijax_quantized import BatchRuleCalled, quantized

LIBS = {"jax": (jax, jjnp, jhijax), "mjax": (mjax, mjnp, mhijax)}
_DEFS: dict = {}


def _defs(lib):
    """The quantized array of docs/hijax_types.md (hijax_quantized.py), one per library."""
    if lib not in _DEFS:
        api, jnp, hijax = LIBS[lib]
        q = quantized(api, jnp, hijax, batch_rule_raises=True)
        _DEFS[lib] = (api, jnp, dict(QArray=q.QArray, quantize=q.quantize,
                                     dequantize=q.dequantize, matmul_q=q.matmul_q))
    return _DEFS[lib]


X = np.array([[1., 2., 3.], [4., -5., 6.]], np.float32)
W = np.arange(12., dtype=np.float32).reshape(3, 4) / 12.


def _both(run):
    """run(api, jnp, ns) under each library."""
    return {lib: run(*_defs(lib)) for lib in LIBS}


def _same(run):
    got = _both(run)
    assert got["mjax"] == got["jax"]
    return got["jax"]


def test_jaxpr_of_hi_intermediates():
    text = _same(lambda api, jnp, ns: str(api.jit(
        lambda x: ns["dequantize"](ns["quantize"](x))).trace(jnp.asarray(X)).jaxpr))
    assert "b:q8[2,3] = call_hi_primitive[_prim=Quantize[{}]] a" in text


def test_jaxpr_of_hi_argument_and_result():
    _same(lambda api, jnp, ns: str(api.jit(ns["matmul_q"]).trace(
        jnp.asarray(X), ns["quantize"](jnp.asarray(W))).jaxpr))
    _same(lambda api, jnp, ns: str(api.jit(ns["quantize"]).trace(jnp.asarray(X)).jaxpr))
    # (an argument the function does not use, and a hi value passed through)
    _same(lambda api, jnp, ns: str(api.jit(lambda x, q: (q, x + 1.)).trace(
        jnp.asarray(X), ns["quantize"](jnp.asarray(W))).jaxpr))


def test_jaxpr_of_nested_jits_and_make_jaxpr():
    def nested(api, jnp, ns):
        inner = api.jit(ns["matmul_q"])
        x, w = jnp.asarray(X), jnp.asarray(W)
        return (str(api.jit(lambda x, q: inner(x, q) + 1.).trace(x, ns["quantize"](w)).jaxpr),
                str(api.jit(lambda x: inner(x, ns["quantize"](w))).trace(x).jaxpr),
                str(api.jit(lambda q: api.jit(lambda q: q)(q)).trace(ns["quantize"](w)).jaxpr))
    _same(nested)
    _same(lambda api, jnp, ns: str(api.make_jaxpr(ns["dequantize"])(
        ns["quantize"](jnp.asarray(W)))))
    _same(lambda api, jnp, ns: str(api.make_jaxpr(ns["quantize"])(jnp.asarray(W))))

    def closed_over(api, jnp, ns):       # (a hi constant: one constvar of its type)
        qw = ns["quantize"](jnp.asarray(W))
        return str(api.jit(lambda x: ns["matmul_q"](x, qw)).trace(jnp.asarray(X)).jaxpr)
    assert _same(closed_over).startswith("{ lambda a:q8[3,4]; b:f32[2,3]. let")


def test_traced_code_sees_a_tracer_of_the_hi_type():
    def field(api, jnp, ns):
        with pytest.raises(AttributeError) as e:
            api.jit(lambda q: q.qvalue)(ns["quantize"](jnp.asarray(X)))
        return str(e.value)
    assert _same(field) == "DynamicJaxprTracer has no attribute qvalue"

    def typed(api, jnp, ns):
        seen = []

        def f(q):
            seen.append((str(api.typeof(q)), q.nbytes, q.rows(), repr(q)))
            return ns["dequantize"](q)
        q = ns["quantize"](jnp.asarray(X))
        out = api.jit(f)(q)
        api.grad(lambda q: jnp.sum(f(q)))(q)      # (GradTracer(primal=QArray(...), ...))
        return seen, np.asarray(out).round(5).tolist()
    _same(typed)


def test_jit_returning_value_class_over_tracers_is_a_type_error():
    def run(api, jnp, ns):
        def bad(x):
            scale = jnp.max(jnp.abs(x), axis=-1) / 127.
            return ns["QArray"](jnp.round(x / scale[..., None]).astype("int8"), scale)
        with pytest.raises(TypeError, match="No constant handler for type"):
            api.jit(bad)(jnp.asarray(X))
    _both(run)


def test_results_and_gradients_unchanged():
    def run(api, jnp, ns):
        x = jnp.asarray(X)
        q = api.jit(ns["quantize"])(x)
        g = api.grad(lambda x: jnp.sum(ns["dequantize"](ns["quantize"](x)) ** 2))(x)
        return (str(api.typeof(q)), np.asarray(api.jit(ns["dequantize"])(q)),
                np.asarray(g), np.asarray(api.jit(ns["matmul_q"])(x, ns["quantize"](
                    jnp.asarray(W)))))
    got = _both(run)
    assert got["mjax"][0] == got["jax"][0]
    for a, b in zip(got["mjax"][1:], got["jax"][1:]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_vmap_calls_the_primitives_batch_rule():
    def run(api, jnp, ns):
        xs = jnp.arange(24., dtype="float32").reshape(4, 2, 3)
        with pytest.raises(BatchRuleCalled):
            api.vmap(api.grad(lambda x: jnp.sum(ns["dequantize"](ns["quantize"](x)) ** 2)))(xs)
    _both(run)


def _sharded(lib):
    """docs/hijax_types.md's QArray whose type carries its sharding, with quantize and
    dequantize primitives declaring sharded result types."""
    api, jnp, hijax = LIBS[lib]

    @dataclass(frozen=True)
    class SQArray:
        qvalue: object
        scale: object

    @dataclass(frozen=True)
    class SQArrayTy(hijax.HiType):
        shape: tuple
        sharding: object

        def lo_ty(self):
            scale = self.sharding.update(spec=api.P(*self.sharding.spec[:-1]))
            return [hijax.ShapedArray(self.shape, jnp.dtype("int8"), sharding=self.sharding),
                    hijax.ShapedArray(self.shape[:-1], jnp.dtype("float32"), sharding=scale)]

        def lower_val(self, q):
            return [q.qvalue, q.scale]

        def raise_val(self, qvalue, scale):
            return SQArray(qvalue, scale)

        def to_tangent_aval(self):
            return hijax.ShapedArray(self.shape, jnp.dtype("float32"), sharding=self.sharding)

        def str_short(self, short_dtypes=False, mesh_axis_types=False):
            dims = [str(d) if p is None else f"{d}@{p}"
                    for d, p in zip(self.shape, self.sharding.spec)]
            return f"q8[{','.join(dims)}]"
        __repr__ = str_short

    hijax.register_hitype(SQArray, lambda q: SQArrayTy(q.qvalue.shape,
                                                       api.typeof(q.qvalue).sharding))

    class SQuantize(hijax.VJPHiPrimitive):
        def __init__(self, x_aval):
            self.in_avals = (x_aval,)
            self.out_aval = SQArrayTy(x_aval.shape, x_aval.sharding)
            self.params = {}
            super().__init__()

        def expand(self, x):
            scale = jnp.max(jnp.abs(x), axis=-1) / 127.
            return SQArray(jnp.round(x / scale[..., None]).astype(jnp.int8), scale)

    class SDequantize(hijax.VJPHiPrimitive):
        def __init__(self, q_aval):
            self.in_avals = (q_aval,)
            self.out_aval = hijax.ShapedArray(q_aval.shape, jnp.dtype("float32"),
                                              sharding=q_aval.sharding)
            self.params = {}
            super().__init__()

        def expand(self, qx):
            return qx.qvalue.astype("float32") * qx.scale[..., None]

    return (lambda x: SQuantize(api.typeof(x))(x)), (lambda q: SDequantize(api.typeof(q))(q))


def test_jaxpr_of_sharded_hi_values():
    def run(api, jnp, ns):
        quantize, dequantize = _sharded("jax" if api is jax else "mjax")
        mesh = api.make_mesh((4,), ("i",), axis_types=(api.sharding.AxisType.Explicit,))
        with api.set_mesh(mesh):
            rows = api.device_put(jnp.arange(24., dtype="float32").reshape(8, 3), api.P("i"))
            text = str(api.jit(lambda x: dequantize(quantize(x))).trace(rows).jaxpr)
            return text, str(api.typeof(quantize(rows)))
    text, _ = _same(run)
    assert "c:f32[8@i,3] = call_hi_primitive" in text
