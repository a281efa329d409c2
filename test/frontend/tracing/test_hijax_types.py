"""hijax's high-level types (jax.experimental.hijax HiType / MutableHiType / HiPrimitive)
through eager calls, jit, grad and eval_shape, checked against JAX (installed as a
test-only oracle): a quantized array (JAX's docs/hijax_types.md) and a mutable box."""
import itertools
from dataclasses import dataclass

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import hijax as jhijax

import mjax
import mjax.numpy as mjnp
from mjax.experimental import hijax as mhijax
from hijax_quantized import quantized

LIBS = {"jax": (jax, jjnp, jhijax), "mjax": (mjax, mjnp, mhijax)}
_DEFS: dict = {}


def _quantized(lib):
    """QArray, its type and the quantize/dequantize primitives of hijax_types.md
    (hijax_quantized.py); dequantize.matmul_q is the matmul primitive."""
    q = quantized(*LIBS[lib])
    q.dequantize.matmul_q = q.matmul_q
    return q.QArray, q.QArrayTy, q.quantize, q.dequantize


def _box(lib):
    """A mutable box of one array, with get/set HiPrimitives (as JAX's own Box)."""
    api, jnp, hijax = LIBS[lib]

    @dataclass(frozen=True)
    class BoxState:
        aval: object

    class Box:
        def __init__(self, val):
            self._val = val

        def cur_qdd(self):
            return BoxState(api.typeof(self._val))

    class BoxTy(hijax.MutableHiType):
        def __hash__(self):
            return hash(BoxTy)

        def __eq__(self, other):
            return isinstance(other, BoxTy)

        def lo_ty_qdd(self, state):
            return [state.aval]

        def new_from_loval(self, state, val):
            return Box(val)

        def read_loval(self, state, box):
            return [get_p.bind(box, aval=state.aval)]

        def update_from_loval(self, state, box, val):
            set_p.bind(box, val)

        def to_tangent_aval(self):
            return BoxTy()

    hijax.register_hitype(Box, lambda b: BoxTy())

    class BoxGet(hijax.HiPrimitive):
        def abstract_eval(self, box_ty, *, aval):
            return aval, set()

        def to_lojax(self, box, *, aval):
            return box._val

    class BoxSet(hijax.HiPrimitive):
        multiple_results = True

        def abstract_eval(self, box_ty, val_aval):
            box_ty.mutable_qdd.update(BoxState(val_aval))
            return [], set()

        def to_lojax(self, box, val):
            box._val = val
            return []

    get_p, set_p = BoxGet("box_get"), BoxSet("box_set")

    def get(box):
        return get_p.bind(box, aval=api.experimental.cur_qdd(box).aval)

    def set_(box, v):
        set_p.bind(box, v)
    return Box, get, set_


def _defs(kind, lib):
    if (kind, lib) not in _DEFS:
        _DEFS[kind, lib] = (_quantized if kind == "q" else _box)(lib)
    return _DEFS[kind, lib]


X = np.array([[1., 2., 3.], [4., -5., 6.]], np.float32)


@pytest.mark.parametrize("how", ["eager", "jit_internal", "jit_result", "jit_argument"])
def test_quantized_array_matches_jax(how):
    results = {}
    for lib in LIBS:
        api = LIBS[lib][0]
        QArray, QArrayTy, quantize, dequantize = _defs("q", lib)
        x = LIBS[lib][1].asarray(X)
        if how == "eager":
            q = quantize(x)
            out = (q.qvalue, q.scale, dequantize(q))
        elif how == "jit_internal":
            out = (api.jit(lambda x: dequantize(quantize(x)))(x),)
        elif how == "jit_result":
            q = api.jit(quantize)(x)
            assert isinstance(q, QArray) and api.typeof(q) == QArrayTy((2, 3))
            out = (q.qvalue, q.scale)
        else:
            q = quantize(x)
            out = (api.jit(dequantize)(q), api.jit(lambda q: q)(q).scale)
        results[lib] = [np.asarray(o) for o in out]
    for a, b in zip(results["jax"], results["mjax"]):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-6)
    if how != "jit_result":      # (dequantized values are close to the originals)
        np.testing.assert_allclose(results["mjax"][2 if how == "eager" else 0], X,
                                   atol=0.05)


def test_quantized_typeof_and_trace_cache():
    QArray, QArrayTy, quantize, dequantize = _defs("q", "mjax")
    q = quantize(mjnp.asarray(X))
    assert mjax.typeof(q) == QArrayTy((2, 3))
    count = itertools.count()

    def f(q):
        next(count)
        return dequantize(q) * 2
    g = mjax.jit(f)
    for _ in range(3):
        np.testing.assert_allclose(g(q), 2 * np.asarray(dequantize(q)))
    assert next(count) == 1      # traced once for one hi type


@pytest.mark.parametrize("how", ["through", "wrt_qarray", "matmul", "jit_of_grad",
                                 "grad_of_jit", "scan", "vjp"])
def test_quantized_gradients_and_scan_match_jax(how):
    # the tangent type of a quantized array is f32 (to_tangent_aval), and the primitives'
    # straight-through VJP rules make quantization differentiate as the identity
    W = np.arange(12., dtype=np.float32).reshape(3, 4) / 12.
    results = {}
    for lib in LIBS:
        api, jnp, _ = LIBS[lib]
        QArray, QArrayTy, quantize, dequantize = _defs("q", lib)
        x = jnp.asarray(X)

        def f(x):
            return jnp.sum(dequantize(quantize(x)) ** 2)

        def g(qx):
            return jnp.sum(dequantize(qx) ** 2)

        def loss(x, qw):
            return jnp.sum(dequantize.matmul_q(x, qw) ** 2)
        if how == "through":
            out = [api.grad(f)(x)]
        elif how == "wrt_qarray":
            gq = api.grad(g)(quantize(x))
            assert str(api.typeof(gq)) == "float32[2,3]"
            out = [gq]
        elif how == "matmul":
            out = list(api.grad(loss, argnums=(0, 1))(x, quantize(jnp.asarray(W))))
        elif how == "jit_of_grad":
            out = [api.jit(api.grad(g))(quantize(x))]
        elif how == "grad_of_jit":
            out = [api.grad(lambda q: jnp.sum(api.jit(dequantize)(q) ** 2))(quantize(x))]
        elif how == "vjp":
            y, pullback = api.vjp(lambda q, x: dequantize.matmul_q(x, q),
                                  quantize(jnp.asarray(W)), x)
            out = [y, *pullback(jnp.ones((2, 4), "float32"))]
        else:
            def accum(qtotal, x):
                return quantize(dequantize(qtotal) + x), quantize(2 * x)
            xs = jnp.arange(24., dtype="float32").reshape(4, 2, 3)
            qtotal, qys = api.lax.scan(accum, quantize(jnp.zeros((2, 3), "float32")), xs)
            assert isinstance(qys, QArray) and api.typeof(qys) == QArrayTy((4, 2, 3))
            out = [qtotal.qvalue, qtotal.scale, qys.qvalue, qys.scale]
        results[lib] = [np.asarray(o) for o in out]
    for a, b in zip(results["jax"], results["mjax"], strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5)


def _box_lib(lib):
    return _defs("b", lib)


@pytest.mark.parametrize("lib", list(LIBS))
def test_box_mutated_in_jit_is_written_back(lib):
    api, jnp, _ = LIBS[lib]
    Box, get, set_ = _box_lib(lib)
    box = Box(jnp.float32(1.0))

    @api.jit
    def step(box, x):
        set_(box, get(box) * x + 1.0)
        return get(box) * 10.0

    outs = [float(step(box, jnp.float32(2.0))) for _ in range(3)]
    assert outs == [30.0, 70.0, 150.0]
    assert float(get(box)) == 15.0


def test_box_matches_jax_under_eval_shape():
    res = {}
    for lib in LIBS:
        api, jnp, _ = LIBS[lib]
        Box, get, set_ = _box_lib(lib)
        box = Box(jnp.float32(2.0))

        def f(x, box):
            set_(box, x * 3.0)
            return x ** 2 + get(box)

        shape = api.eval_shape(f, jnp.ones((3,), jnp.float32), box)
        res[lib] = (shape.shape, str(shape.dtype))
    assert res["mjax"] == res["jax"]


def test_box_as_nondiff_grad_argument():
    # (JAX differentiates through the box's primitives' jvp rules; mjax through the lo
    # ops their to_lojax gives: the results are those of the closed form.)
    Box, get, set_ = _box_lib("mjax")
    box = Box(mjnp.float32(2.0))

    def loss(x, box):
        set_(box, mjax.lax.stop_gradient(x * 3.0))
        return x ** 2 + get(box)

    assert float(mjax.grad(loss)(mjnp.float32(4.0), box)) == 8.0
    assert float(get(box)) == 12.0
    v, g = mjax.jit(mjax.value_and_grad(loss))(mjnp.float32(5.0), box)
    assert (float(v), float(g), float(get(box))) == (40.0, 10.0, 15.0)


@pytest.mark.parametrize("lib", list(LIBS))
def test_closed_over_box_mutated_in_jit(lib):
    api, jnp, _ = LIBS[lib]
    Box, get, set_ = _box_lib(lib)
    box = Box(jnp.float32(1.0))

    @api.jit
    def step(x):
        set_(box, get(box) + x)
        return get(box) * 2.0

    outs = [float(step(jnp.float32(3.0))) for _ in range(3)]
    assert outs == [8.0, 14.0, 20.0]
    set_(box, jnp.float32(0.5))          # (changed outside: the next call reads it)
    assert float(step(jnp.float32(1.0))) == 3.0
    assert float(get(box)) == 1.5


def test_closed_over_box_mutated_in_grad_and_scan():
    Box, get, set_ = _box_lib("mjax")
    box = Box(mjnp.float32(2.0))

    def loss(x):
        set_(box, mjax.lax.stop_gradient(x * 3.0))
        return x ** 2 + get(box)
    assert float(mjax.grad(loss)(mjnp.float32(4.0))) == 8.0
    assert float(get(box)) == 12.0

    def body(c, x):
        set_(box, get(box) + x)
        return c + get(box), None
    total, _ = mjax.lax.scan(body, mjnp.float32(0.0), mjnp.arange(4, dtype=mjnp.float32))
    # box: 12 -> 12, 13, 15, 18; total = 12 + 13 + 15 + 18
    assert (float(total), float(get(box))) == (58.0, 18.0)
    total, _ = mjax.jit(lambda xs: mjax.lax.scan(body, mjnp.float32(0.0), xs))(
        mjnp.ones(2, mjnp.float32))
    assert (float(total), float(get(box))) == (39.0, 20.0)


def test_jvp_and_vmap_of_hi_values_say_what_is_missing():
    QArray, QArrayTy, quantize, dequantize = _defs("q", "mjax")
    q = quantize(mjnp.asarray(X))
    with pytest.raises(NotImplementedError, match="jvp"):
        mjax.jvp(dequantize, (q,), (mjnp.ones((2, 3)),))
    with pytest.raises(NotImplementedError, match="vmap over a value of hi type"):
        mjax.vmap(dequantize)(q)
    # (closed over, with in_axes None, a hi value is not mapped)
    out = mjax.vmap(lambda q, s: dequantize(q) * s, in_axes=(None, 0))(
        q, mjnp.arange(2.0))
    np.testing.assert_allclose(out, np.arange(2.0)[:, None, None] * np.asarray(
        dequantize(q)), rtol=1e-6)
