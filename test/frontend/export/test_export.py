"""mjax.export: export, serialize, deserialize (also in another process), call eagerly,
under jit and under grad; checked against the functions themselves, NumPy and jax."""
import os
import re
import subprocess
import sys
import textwrap

import jax
import ml_dtypes
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import export

from frontend_util import tol

W = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)


def mlp(params, x):
    h = jnp.tanh(x @ params["w"] + params["b"])
    return {"y": h.sum(axis=-1), "h": h}


def _params():
    return {"w": W, "b": np.arange(4, dtype=np.float32) / 10}


def _x():
    return np.linspace(0.0, 1.0, 6, dtype=np.float32).reshape(2, 3)


def test_exported_fields_and_eager_call():
    exp = export.export(mjax.jit(mlp))(_params(), mjax.ShapeDtypeStruct((2, 3), np.float32))
    assert exp.fun_name == "mlp"
    assert [a.shape for a in exp.in_avals] == [(4,), (3, 4), (2, 3)]   # b, w (sorted), x
    assert [a.dtype for a in exp.out_avals] == [np.float32, np.float32]
    assert exp.in_tree == mjax.tree_util.tree_structure(((_params(), _x()), {}))
    assert exp.out_tree == mjax.tree_util.tree_structure({"h": 0, "y": 0})
    assert exp.platforms == (mjax.default_backend(),)
    assert exp.nr_devices == 1 and exp.calling_convention_version == 10
    assert exp.in_shardings_hlo == (None,) * 3 and exp.out_shardings_hlo == (None,) * 2
    assert "func.func public @main" in exp.mlir_module() and "stablehlo.tanh" in exp.mlir_module()
    assert isinstance(exp.mlir_module_serialized, bytes)
    got = exp.call(_params(), _x())
    want = mlp(_params(), _x())
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-6)
    np.testing.assert_allclose(got["h"], want["h"], rtol=1e-6)


def test_closed_over_arrays_become_constants():
    big = np.arange(8, dtype=np.float32)
    exp = export.export(mjax.jit(lambda x: x * big))(np.ones(8, np.float32))
    assert len(exp.in_avals) == 1
    np.testing.assert_allclose(exp.call(np.full(8, 2.0, np.float32)), 2 * big)


def test_call_under_jit_and_grad_after_round_trip():
    exp = export.export(mjax.jit(mlp))(_params(), _x())
    back = export.deserialize(exp.serialize(vjp_order=1))
    loss = lambda p, x: back.call(p, x)["y"].sum()       # noqa: E731
    np.testing.assert_allclose(mjax.jit(loss)(_params(), _x()),
                               mlp(_params(), _x())["y"].sum(), rtol=1e-6)
    g = mjax.jit(mjax.grad(loss))(_params(), _x())
    want = jax.grad(lambda p, x: jax.numpy.tanh(x @ p["w"] + p["b"]).sum())(_params(), _x())
    np.testing.assert_allclose(g["w"], want["w"], rtol=1e-5)
    np.testing.assert_allclose(g["b"], want["b"], rtol=1e-5)
    # Same module called twice in one jit, on different inputs.
    two = mjax.jit(lambda p, x: back.call(p, x)["y"] + back.call(p, 2 * x)["y"])
    np.testing.assert_allclose(two(_params(), _x()), mlp(_params(), _x())["y"]
                               + mlp(_params(), 2 * _x())["y"], rtol=1e-6)


def test_grad_without_vjp_is_an_error():
    back = export.deserialize(export.export(mjax.jit(jnp.sin))(np.ones(3, np.float32))
                              .serialize())
    assert not back.has_vjp()
    with pytest.raises(ValueError, match="No VJP is available"):     # (JAX's class)
        mjax.grad(lambda x: back.call(x).sum())(np.ones(3, np.float32))


def test_second_order_vjp():
    exp = export.export(mjax.jit(lambda x: jnp.sin(x) * x))(np.float32(0.5))
    back = export.deserialize(exp.serialize(vjp_order=2))
    d2 = mjax.grad(mjax.grad(back.call))(np.float32(0.5))
    x = 0.5
    np.testing.assert_allclose(d2, 2 * np.cos(x) - x * np.sin(x), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int8,
                                   np.int32, np.uint8, np.bool_])
def test_dtypes_round_trip(dtype):
    x = (np.arange(6) % 2).astype(dtype)
    f = mjax.jit(lambda x: (x, jnp.logical_not(x) if dtype == np.bool_ else x + x))
    back = export.deserialize(export.export(f)(x).serialize())
    assert [a.dtype for a in back.in_avals] == [np.dtype(dtype)]
    a, b = back.call(x)
    assert a.dtype == np.dtype(dtype) and b.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(b), np.asarray(f(x)[1]))


def test_grad_with_integer_argument_and_output():
    f = mjax.jit(lambda x, n: (x * n.astype(jnp.float32), n + 1))
    back = export.deserialize(export.export(f)(np.ones(3, np.float32), np.int32(3))
                              .serialize(vjp_order=1))
    g = mjax.grad(lambda x: back.call(x, np.int32(3))[0].sum())(np.ones(3, np.float32))
    np.testing.assert_allclose(g, np.full(3, 3.0))


def test_round_trip_in_another_process(tmp_path):
    # The child runs on the host's CPU (on a TPU machine this process holds the chip), so
    # the module is exported for the CPU.
    exp = export.export(mjax.jit(mlp), platforms=("cpu",))(_params(), _x())
    path = tmp_path / "mlp.bin"
    path.write_bytes(exp.serialize(vjp_order=1))
    script = textwrap.dedent(f"""
        import numpy as np, mjax
        from mjax import export
        exp = export.deserialize(open({str(path)!r}, "rb").read())
        p = {{"w": np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4),
              "b": np.arange(4, dtype=np.float32) / 10}}
        x = np.linspace(0.0, 1.0, 6, dtype=np.float32).reshape(2, 3)
        y = mjax.jit(lambda p, x: exp.call(p, x)["y"])(p, x)
        g = mjax.grad(lambda p, x: exp.call(p, x)["y"].sum())(p, x)
        np.save({str(tmp_path / "y.npy")!r}, np.asarray(y))
        np.save({str(tmp_path / "gw.npy")!r}, np.asarray(g["w"]))
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=300,
                   env={**os.environ, "JAX_PLATFORMS": "cpu"})
    # The references are jax's on the host CPU, where the child ran (on a TPU machine the
    # default device is the chip, whose tanh is not the CPU's).
    with jax.default_device(jax.devices("cpu")[0]):
        y = jax.jit(lambda p, x: jax.numpy.tanh(x @ p["w"] + p["b"]).sum(-1))(_params(), _x())
        want = jax.grad(lambda p, x: jax.numpy.tanh(x @ p["w"] + p["b"]).sum())(_params(),
                                                                                _x())
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), y, rtol=1e-6)
    np.testing.assert_allclose(np.load(tmp_path / "gw.npy"), want["w"], rtol=1e-5)


def test_multi_platform_export_takes_platform_index():
    exp = export.export(mjax.jit(jnp.cos), platforms=("cpu", "cuda"))(np.ones(3, np.float32))
    assert exp.platforms == ("cpu", "cuda")
    assert "jax.global_constant" in exp.mlir_module()
    x = np.linspace(0, 1, 3, dtype=np.float32)
    if mjax.default_backend() == "cpu":
        np.testing.assert_allclose(mjax.jit(exp.call)(x), np.cos(x), rtol=1e-6)


def test_jax_reads_the_portable_artifact():
    """The artifact is plain StableHLO: JAX's own deserializer parses it."""
    from jax._src.lib import _jax
    from jax._src.interpreters import mlir as jmlir
    exp = export.export(mjax.jit(jnp.sin))(np.ones(3, np.float32))
    with jmlir.make_ir_context():
        module = _jax.mlir.deserialize_portable_artifact(exp.mlir_module_serialized)
        assert "stablehlo.sine" in str(module)


# ---- errors -------------------------------------------------------------------------------
def test_export_needs_jit():
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        export.export(lambda x: jnp.sin(x))
    # (mjax's own functions stand for JAX's, which are jitted: export.export(jnp.cos))
    exp = export.export(jnp.cos)(np.float32(0.5))
    assert exp.fun_name == "cos"
    np.testing.assert_allclose(exp.call(np.float32(0.5)), np.cos(np.float32(0.5)))


def test_call_with_wrong_arguments():
    exp = export.export(mjax.jit(jnp.sin))(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="Shape mismatch"):
        exp.call(np.ones(4, np.float32))
    with pytest.raises(ValueError, match="Dtype mismatch"):
        exp.call(np.ones(3, np.int32))
    with pytest.raises(ValueError, match="Rank mismatch"):
        exp.call(np.ones((3, 1), np.float32))
    with pytest.raises(ValueError, match="same pytree structure"):
        exp.call(np.ones(3, np.float32), np.ones(3, np.float32))


def test_wrong_platform():
    other = "cpu" if mjax.default_backend() == "tpu" else "tpu"    # (not the one running)
    exp = export.export(mjax.jit(jnp.sin), platforms=(other,))(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="was exported for platforms"):
        exp.call(np.ones(3, np.float32))
    lenient = export.export(mjax.jit(jnp.sin), platforms=(other,),
                            disabled_checks=[export.DisabledSafetyCheck.platform()])(
        np.ones(3, np.float32))
    np.testing.assert_allclose(lenient.call(np.ones(3, np.float32)), np.sin(1.0), rtol=1e-6)


def test_host_callbacks_cannot_be_exported():
    def f(x):
        return mjax.pure_callback(np.sin, mjax.ShapeDtypeStruct(x.shape, x.dtype), x)
    with pytest.raises(ValueError, match="custom calls whose targets have no"):
        export.export(mjax.jit(f))(np.ones(3, np.float32))


def test_deserialize_rejects_garbage():
    for garbage in (b"not an export", b"", bytes(64)):
        with pytest.raises(ValueError, match="truncated or corrupt"):
            export.deserialize(garbage)
    blob = export.export(mjax.jit(jnp.sin))(np.ones(3, np.float32)).serialize()
    with pytest.raises(ValueError, match="truncated"):
        export.deserialize(blob[:len(blob) // 2])


def test_function_without_reverse_mode_still_calls():
    """A dynamic while_loop has no VJP: calling works, differentiating is an error."""
    f = mjax.jit(lambda x: mjax.lax.while_loop(lambda c: c.sum() < 100, lambda c: c * 2, x))
    exp = export.export(f)(np.ones(4, np.float32))
    np.testing.assert_allclose(exp.call(np.ones(4, np.float32)), np.full(4, 32.0))
    with pytest.raises(Exception, match="No VJP is available"):
        mjax.grad(lambda x: exp.call(x).sum())(np.ones(4, np.float32))


def test_custom_calls_with_compatibility_guarantees_export_others_refused():
    """As JAX's export: jaxlib's LAPACK kernels, XLA's TPU linear algebra and Mosaic
    kernels may be serialized; a host callback may not."""
    x = np.eye(3, dtype=np.float32) * 4
    cholesky = mjax.jit(mjax.numpy.linalg.cholesky)
    exp = mjax.export.export(cholesky, platforms=["cpu"])(x)
    assert "lapack_spotrf_ffi" in exp.mlir_module()
    if mjax.default_backend() != "cpu":     # (a TPU's cholesky is an op, no custom call)
        exp = mjax.export.export(cholesky)(x)
    np.testing.assert_allclose(np.asarray(exp.call(x)), np.eye(3, dtype=np.float32) * 2,
                               rtol=tol(0, 1e-6))
    for fn in (jax.numpy.linalg.qr, jax.numpy.linalg.eigh):
        # (a module JAX exports for the TPU holds Qr/Eigh custom calls: mjax's too)
        mine = mjax.export.export(mjax.jit(getattr(mjax.numpy.linalg, fn.__name__)),
                                  platforms=["tpu"])(x).mlir_module()
        theirs = jax.export.export(jax.jit(fn), platforms=["tpu"])(x).mlir_module()
        assert set(re.findall(r"custom_call @(\w+)", mine)) == set(
            re.findall(r"custom_call @(\w+)", theirs))
    with pytest.raises(ValueError, match="no compatibility guarantees"):
        mjax.export.export(mjax.jit(lambda v: mjax.pure_callback(
            np.sin, mjax.ShapeDtypeStruct((3, 3), np.float32), v)))(x)
