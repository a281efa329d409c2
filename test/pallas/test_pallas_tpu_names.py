"""Pallas TPU names JAX 0.10.2 has that mjax added late: pltpu.run_on_first_core,
pl.empty_ref_like, pl.get_global and the explicit MXU ops. Modules are compared with
JAX's lowered for the TPU on this CPU (told it is a v5e), values with JAX's TPU
interpreter and NumPy, refusals with JAX's errors."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402
from jax._src.pallas.mosaic import tpu_info as jax_tpu_info  # noqa: E402

import mjax  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402


from test_mosaic_differential import (ON_TPU, assert_compiled_as_jax,  # noqa: E402
                                      assert_same_mosaic, cpu_as_v5e, tpu_mosaic)

LIBS = {"jax": (jax, jpl, jpltpu), "mjax": (mjax, pl, pltpu)}
SHAPE = (16, 128)


def _x():
    return np.random.default_rng(7).standard_normal(SHAPE).astype(np.float32)


# -- pltpu.run_on_first_core ---------------------------------------------------------

def first_core(J, P, T, **kw):
    """A core_map whose body runs on the first core of its axis (a one-core mesh: JAX
    calls the function directly), returning the decorated function's result."""
    mesh = T.create_tensorcore_mesh("core", num_cores=1)
    seen = []

    def f(x):
        x_ref, o_ref = J.new_ref(x), J.new_ref(J.lax.empty(x.shape, x.dtype))

        @P.core_map(mesh, scratch_shapes=[T.VMEM(x.shape, x.dtype)], **kw)
        def _(v):
            @T.run_on_first_core("core")
            def result():
                T.sync_copy(x_ref, v)
                v[...] = v[...] * 2.0 + 1.0
                T.sync_copy(v, o_ref)
                return 5
            seen.append(result)
        return o_ref[...]
    return f, seen


def test_run_on_first_core_mosaic_matches_jax():
    got = []
    for lib in ("jax", "mjax"):
        J, P, T = LIBS[lib]
        f, seen = first_core(J, P, T)
        got.append(tpu_mosaic(J, f, [(SHAPE, np.float32)], v5e=True))
        assert seen and set(seen) == {5}   # (one core: the function's own result)
    (jconfig, jbody), (mconfig, mbody) = got
    assert mconfig == jconfig
    assert_same_mosaic(jbody, mbody)


def test_run_on_first_core_values_match_jax_and_numpy():
    """TPU interpret mode in both libraries (compiled on the chip), and mjax's
    interpret=True, against NumPy."""
    x = _x()
    mode = (lambda T: contextlib.nullcontext()) if ON_TPU else (
        lambda T: T.force_tpu_interpret_mode())
    with mode(pltpu):
        got = np.asarray(mjax.jit(first_core(mjax, pl, pltpu)[0])(x))
    with mode(jpltpu), cpu_as_v5e(jax_tpu_info):
        want = np.asarray(jax.jit(first_core(jax, jpl, jpltpu)[0])(x))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, x * 2.0 + 1.0, rtol=1e-6, atol=1e-6)
    plain = mjax.jit(first_core(mjax, pl, pltpu, interpret=True)[0])(x)
    np.testing.assert_allclose(np.asarray(plain), x * 2.0 + 1.0, rtol=1e-6, atol=1e-6)


def test_run_on_first_core_outside_a_mesh_refused_as_jax():
    """An axis name no mesh binds: JAX's NameError, from lax.axis_size."""
    with pytest.raises(NameError) as want:
        jpltpu.run_on_first_core("nope")
    with pytest.raises(NameError) as got:
        pltpu.run_on_first_core("nope")
    assert "nope" in str(want.value) and "nope" in str(got.value)


# -- pl.empty_ref_like -----------------------------------------------------------------

def _jit_level(J, P, T, like):
    def f(x):
        r = P.empty_ref_like(like(J, T, x))
        r[...] = x * 3.0
        r[...] = r[...] - 1.0
        return r[...]
    return f


JIT_LEVEL = {"shape_dtype_struct": lambda J, T, x: J.ShapeDtypeStruct(x.shape, x.dtype),
             "any": lambda J, T, x: (jpl if J is jax else pl).ANY(x.shape, x.dtype)}


@pytest.mark.parametrize("like", JIT_LEVEL)
def test_empty_ref_like_in_jit_values_match_jax(like):
    """At the jit level a ShapeDtypeStruct (or an ANY MemoryRef) gives a plain ref."""
    x = _x()
    got = np.asarray(mjax.jit(_jit_level(mjax, pl, pltpu, JIT_LEVEL[like]))(x))
    want = np.asarray(jax.jit(_jit_level(jax, jpl, jpltpu, JIT_LEVEL[like]))(x))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, x * 3.0 - 1.0, rtol=1e-6, atol=1e-6)


def _in_kernel(J, P, T, like, **kw):
    def k(x_ref, o_ref):
        r = P.empty_ref_like(like(J, T, x_ref))
        r[...] = x_ref[...] + 1.0
        o_ref[...] = r[...] * 2.0
    return P.pallas_call(k, out_shape=J.ShapeDtypeStruct(SHAPE, np.float32), **kw)


IN_KERNEL = {"vmem": lambda J, T, r: T.VMEM(r.shape, r.dtype),
             "shape_dtype_struct": lambda J, T, r: J.ShapeDtypeStruct(r.shape, r.dtype)}


@pytest.mark.parametrize("like", IN_KERNEL)
def test_empty_ref_like_in_a_kernel(like):
    """A kernel-local ref: interpret=True runs it (values vs JAX's and NumPy); both
    libraries' TPU lowerings refuse it with a NotImplementedError."""
    x = _x()
    got = np.asarray(mjax.jit(_in_kernel(mjax, pl, pltpu, IN_KERNEL[like],
                                         interpret=True))(x))
    want = np.asarray(jax.jit(_in_kernel(jax, jpl, jpltpu, IN_KERNEL[like],
                                         interpret=True))(x))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, (x + 1.0) * 2.0, rtol=1e-6, atol=1e-6)
    for J, P, T in (LIBS["jax"], LIBS["mjax"]):
        f = _in_kernel(J, P, T, IN_KERNEL[like])
        with pytest.raises(NotImplementedError):
            J.jit(f).trace(J.ShapeDtypeStruct(SHAPE, np.float32)).lower(
                lowering_platforms=("tpu",)).as_text()


def test_empty_ref_like_errors_as_jax():
    for P in (jpl, pl):
        with pytest.raises(ValueError, match="empty_ref_like does not support"):
            P.empty_ref_like(np.ones(3))
    for J, P, T in (LIBS["jax"], LIBS["mjax"]):
        with pytest.raises(NotImplementedError,
                           match="array ref with memory space only works inside of a"):
            P.empty_ref_like(J.ShapeDtypeStruct((3,), np.float32))


def test_empty_ref_like_in_a_memory_space_at_jit_level_is_refused():
    """JAX allocates an SMEM ref at the jit level for the core_map kernels closing over
    it (JAX's tpu_pallas_memory_space_test test_smem_copy); mjax's jit-level refs have no
    memory space: a NotImplementedError saying so (JAX's lowers)."""
    mesh = pltpu.create_tensorcore_mesh("core", num_cores=1)

    def f():
        y_ref = pl.empty_ref_like(pltpu.SMEM((8,), np.int32))

        @pl.core_map(mesh)
        def _():
            for i in range(8):
                y_ref[i] = i
        return y_ref[...]
    with pytest.raises(NotImplementedError, match="smem ref outside a kernel"):
        mjax.jit(f)()


# -- pl.get_global -------------------------------------------------------------------

def _global_kernel(J, P, T, **kw):
    def k(x_ref, o_ref):
        g = P.get_global(T.VMEM(SHAPE, np.float32))
        g[...] = x_ref[...]
        o_ref[...] = g[...]
    return P.pallas_call(k, out_shape=J.ShapeDtypeStruct(SHAPE, np.float32), **kw)


def test_get_global_refused_as_jax():
    """JAX 0.10.2 has get_global for Mosaic GPU only: its TPU lowering refuses it, its
    evaluation outside a jit too, and a jit outside a kernel fails with a TypeError."""
    for J, P, T in (LIBS["jax"], LIBS["mjax"]):
        with pytest.raises(NotImplementedError, match="Unimplemented primitive in Pallas "
                                                      "TPU lowering for tc: get_global"):
            J.jit(_global_kernel(J, P, T)).trace(J.ShapeDtypeStruct(SHAPE, np.float32)
                                                 ).lower(lowering_platforms=("tpu",))
        with pytest.raises(NotImplementedError,
                           match="Evaluation rule for 'get_global' not implemented"):
            P.get_global(T.SemaphoreType.REGULAR)
        with pytest.raises(TypeError, match="No ir_type_handler for aval type"):
            J.jit(lambda: P.get_global(T.VMEM((8,), np.float32))[...])()
    # JAX's interpreter fails on it (a TypeError); mjax refuses it when traced
    with pytest.raises(TypeError):
        jax.jit(_global_kernel(jax, jpl, jpltpu, interpret=True))(_x())
    with pytest.raises(NotImplementedError, match="get_global"):
        mjax.jit(_global_kernel(mjax, pl, pltpu, interpret=True))(_x())


# -- pltpu.matmul_push_rhs / matmul_acc_lhs / matmul_pop -------------------------------

def mxu_f32(J, P, T, **kw):
    """Stage b transposed, accumulate a @ b.T twice (loading it once), pop in f32."""
    def k(a_ref, b_ref, o_ref):
        T.matmul_push_rhs(b_ref[...], 0, 0, transpose=True)
        T.matmul_acc_lhs(0, a_ref[...], 0, load_staged_rhs=0)
        T.matmul_acc_lhs(0, a_ref[...], 0)
        o_ref[...] = T.matmul_pop(0, (128, 256), np.float32, 0)
    f = P.pallas_call(k, out_shape=J.ShapeDtypeStruct((128, 256), np.float32), **kw)
    return f, [((128, 256), np.float32), ((256, 256), np.float32)]


def mxu_bf16_two_units(J, P, T, **kw):
    """bf16 operands on MXUs 0 and 1, staging register 1, accumulator slices 0 and 64,
    inside a grid over row blocks."""
    def k(a_ref, b_ref, o_ref, p_ref):
        T.matmul_push_rhs(b_ref[...], 1, 0)
        T.matmul_push_rhs(b_ref[...], 0, 1, transpose=False)
        T.matmul_acc_lhs(0, a_ref[...], 0, load_staged_rhs=1)
        T.matmul_acc_lhs(64, a_ref[...], 1, load_staged_rhs=0)
        o_ref[...] = T.matmul_pop(0, (64, 256), np.float32, 0)
        p_ref[...] = T.matmul_pop(64, (64, 256), np.float32, 1)
    out = J.ShapeDtypeStruct((128, 256), np.float32)
    f = P.pallas_call(k, out_shape=(out, out), grid=(2,),
                      in_specs=[P.BlockSpec((64, 256), lambda i: (i, 0)),
                                P.BlockSpec((256, 256), lambda i: (0, 0))],
                      out_specs=[P.BlockSpec((64, 256), lambda i: (i, 0))] * 2, **kw)
    return f, [((128, 256), jax.numpy.bfloat16), ((256, 256), jax.numpy.bfloat16)]


def mxu_int8(J, P, T, **kw):
    """int8 operands, an int32 accumulator."""
    def k(a_ref, b_ref, o_ref):
        T.matmul_push_rhs(b_ref[...], 0, 0)
        T.matmul_acc_lhs(0, a_ref[...], 0, load_staged_rhs=0)
        o_ref[...] = T.matmul_pop(0, (32, 256), np.int32, 0)
    f = P.pallas_call(k, out_shape=J.ShapeDtypeStruct((32, 256), np.int32), **kw)
    return f, [((32, 256), np.int8), ((256, 256), np.int8)]


MXU = {k.__name__: k for k in (mxu_f32, mxu_bf16_two_units, mxu_int8)}


@pytest.mark.parametrize("name", MXU)
def test_mxu_mosaic_matches_jax(name):
    """JAX 0.10.2 lowers the explicit MXU ops for the TPU: mjax gives its module."""
    jf, shapes = MXU[name](jax, jpl, jpltpu)
    mf, _ = MXU[name](mjax, pl, pltpu)
    jconfig, jbody = tpu_mosaic(jax, jf, shapes, v5e=True)
    mconfig, mbody = tpu_mosaic(mjax, mf, shapes, v5e=True)
    assert mconfig == jconfig
    assert_same_mosaic(jbody, mbody)
    for op in ("tpu.matmul_push_rhs", "tpu.matmul_acc_lhs", "tpu.matmul_pop"):
        assert op in mbody


def _args(shapes):
    rng = np.random.default_rng(1)
    return [rng.integers(-3, 4, s).astype(d) for s, d in shapes]


@pytest.mark.parametrize("name", MXU)
def test_mxu_compiled_as_jax(name):
    """Compiled (not interpreted): on the chip mjax's outputs are JAX's bit for bit;
    off it both refuse with JAX's ValueError."""
    jf, shapes = MXU[name](jax, jpl, jpltpu)
    mf, _ = MXU[name](mjax, pl, pltpu)
    assert_compiled_as_jax(jax.jit(jf), mjax.jit(mf), _args(shapes))


@pytest.mark.parametrize("interpret", ["tpu", "plain"])
def test_mxu_interpret_mode_refused_as_jax(interpret):
    """Neither library's interpreter models the MXU: both raise NotImplementedError."""
    for J, P, T in (LIBS["jax"], LIBS["mjax"]):
        mode = T.InterpretParams() if interpret == "tpu" else True
        f, shapes = mxu_f32(J, P, T, interpret=mode)
        with pytest.raises(NotImplementedError, match="matmul_push_rhs"):
            J.jit(f)(*_args(shapes))


def test_mxu_errors_as_jax():
    a = np.ones((8, 256), np.float32)
    for J, P, T in (LIBS["jax"], LIBS["mjax"]):
        with pytest.raises(TypeError, match="load_staged_rhs must be an integer or None"):
            T.matmul_acc_lhs(0, a, 0, load_staged_rhs=True)
        with pytest.raises(ValueError, match="Only float32 and int32 accumulators are "
                                             "supported, got bfloat16"):
            J.jit(lambda: T.matmul_pop(0, (8, 128), J.numpy.bfloat16, 0))()
        for call in (lambda: T.matmul_push_rhs(a, 0, 0),
                     lambda: T.matmul_acc_lhs(0, a, 0),
                     lambda: T.matmul_pop(0, (8, 128), np.float32, 0)):
            with pytest.raises(NotImplementedError, match="Evaluation rule for 'matmul_"):
                call()


def _several_cores(J, T, fn):
    got = []

    def body(xi):
        got.append(T.run_on_first_core("c")(fn))
        return xi
    J.make_jaxpr(J.vmap(body, axis_name="c"))(np.zeros(2, np.float32))
    return got


def test_run_on_first_core_of_several_cores_as_jax():
    """On an axis of two (a vmap's: mjax's meshes have one core) the function is traced
    once as a cond's branch (on axis_index == 0) and the decorator gives None; a function
    returning a value is the cond's TypeError (its other branch gives None), as JAX's."""
    for J, T in ((jax, jpltpu), (mjax, pltpu)):
        calls = []
        assert _several_cores(J, T, lambda: calls.append(1)) == [None]
        assert calls == [1]
        with pytest.raises(TypeError):
            _several_cores(J, T, lambda: np.float32(7))
