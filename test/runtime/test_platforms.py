"""Platforms are found and described as JAX finds and describes them (runtime/backend.py's
records), and programs lower for a platform this machine lacks.

Finding a platform opens it once per process, so those tests run mjax in a child process
with the environment under test (JAX_PLATFORMS unset, a libtpu path given)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.passes.pipeline import PIPELINE, pipeline_for
from mjax.passes.rules.tables import PlatformRules, platform_rules
from mjax.tracing import primitive
from mjax.runtime import backend, tpu


def _child(code: str, **env) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items()
               if k not in ("JAX_PLATFORMS", "MJAX_PLATFORM", "TPU_LIBRARY_PATH")}
    environ.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environ,
                          capture_output=True, text=True, timeout=300)


def test_records_hold_jax_priorities_and_platform_facts():
    records = backend.PLATFORMS
    assert {n: r.priority for n, r in records.items()} == {"cpu": 0, "tpu": 300,
                                                           "cuda": 500, "rocm": 500}
    assert records["tpu"].pallas_pass[0] == "jaxpr-pallas-to-mosaic"
    assert records["cuda"].pallas_pass == ("jaxpr-pallas-to-triton", "platform=cuda")
    assert records["cpu"].linalg == "lapack" and records["tpu"].linalg == "xla"
    assert [records[n].dlpack_kind for n in ("cpu", "cuda", "rocm")] == [1, 2, 10]
    assert backend.platform_record("gpu") is records["cuda"]
    assert backend.platform_record("iree").lowering_option == ""
    assert backend.platform_record("newchip").name == "newchip"   # a plugin mjax lacks


def test_records_hold_what_the_frontend_asks_of_a_platform():
    """The facts the frontend once spelled as lists of platforms (issue 56)."""
    records = backend.PLATFORMS
    assert {n: r.rule_family for n, r in records.items()} == {
        "cpu": None, "tpu": None, "cuda": "gpu", "rocm": "gpu"}
    assert [n for n, r in records.items() if r.host] == ["cpu"]
    assert backend.platform_record("iree").host and not backend.platform_record("newchip").host
    assert [backend.device_memory_platform(k) for k in (1, 2, 10, 7)] == [
        None, "cuda", "rocm", None]
    assert "TPU_LIBRARY_PATH" in backend._missing_plugin("tpu")
    assert "jax-rocm7-pjrt" in backend._missing_plugin("rocm")
    assert "MJAX_PJRT_PLUGIN_NEWCHIP" in backend._missing_plugin("newchip")
    with pytest.raises(ValueError, match="expected 'cpu', 'tpu', 'cuda', 'rocm', 'iree'"):
        backend.Platform.parse("xla")


def test_records_and_lowering_rules_agree_on_linalg():
    """What the frontend may call while tracing (the record's linalg) is what the passes
    lower to (their PLATFORM_RULES)."""
    for name, record in backend.PLATFORMS.items():
        rules = platform_rules(name)
        assert rules.lapack == (record.linalg == "lapack"), name
        assert (rules.solver_prefix is not None) == (record.linalg == "gpu-solver"), name
    assert platform_rules("newchip") == PlatformRules()


def test_a_gpu_lowering_rule_serves_the_gpu_family():
    """register_lowering(platform='gpu') is what lowering for CUDA or ROCm finds; a
    platform's own rule comes first; the CPU finds the default."""
    prim = object()
    rules = {"gpu": "gpu-rule", "rocm": "rocm-rule", None: "default"}
    primitive.LOWERINGS[prim] = rules
    try:
        found = {}
        for name in ("cuda", "rocm", "cpu", "tpu", "iree"):
            with backend.lowering_for(name):
                found[name] = primitive.lowering_of(prim)
    finally:
        del primitive.LOWERINGS[prim]
    assert found == {"cuda": "gpu-rule", "rocm": "rocm-rule", "cpu": "default",
                     "tpu": "default", "iree": "default"}


def test_pipeline_read_from_the_record():
    assert pipeline_for(backend.PLATFORMS["cpu"]) == [
        (n, {"jaxpr-to-stablehlo": "platform=cpu",
             "jaxpr-pallas-interpret": "platform=cpu"}.get(n, o)) for n, o in PIPELINE]
    cuda = [n for n, _ in pipeline_for(backend.PLATFORMS["cuda"])]
    assert cuda.index("jaxpr-pallas-to-triton") < cuda.index("jaxpr-pallas-interpret")
    iree = backend.platform_record("iree")
    assert pipeline_for(iree) == PIPELINE


def test_libtpu_found_from_tpu_library_path(tmp_path, monkeypatch):
    lib = tmp_path / "libtpu.so"
    lib.write_bytes(b"")
    monkeypatch.setenv("TPU_LIBRARY_PATH", str(lib))
    assert tpu.find_library() == str(lib)
    monkeypatch.setenv("TPU_LIBRARY_PATH", str(tmp_path / "missing.so"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = tpu.find_library()
    assert any("not a file" in str(w.message) for w in caught)
    # (then the libtpu package, which this machine may or may not have)
    assert found is None or found.endswith("libtpu.so")


def test_cpu_when_nothing_else_is_installed():
    if backend.PLATFORMS["tpu"].find_library() or any(
            backend.PLATFORMS[n].find_library() for n in ("cuda", "rocm")):
        pytest.skip("an accelerator plugin is installed here")
    run = _child("import mjax; print(mjax.default_backend(), mjax.devices()[0].platform)")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["cpu", "cpu"]


def test_an_installed_tpu_that_does_not_open_falls_back_with_a_warning(tmp_path):
    lib = tmp_path / "libtpu.so"
    lib.write_bytes(b"not a library")
    run = _child("""
        import mjax
        from mjax.runtime import backend
        print(mjax.default_backend(), sorted(backend._SKIPPED))""", TPU_LIBRARY_PATH=str(lib))
    if tpu.tpu_chips():     # (JAX's Cloud TPU setup: platforms 'tpu,cpu', no fallback)
        assert run.returncode != 0
        assert "RuntimeError: Unable to initialize backend 'tpu'" in run.stderr
        return
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["cpu", "['tpu']"]
    assert "tpu plugin is installed but did not open" in run.stderr


def test_cloud_tpu_setup_chooses_the_platforms_as_jax():
    # JAX_FORCE_TPU_INIT: JAX's Cloud TPU setup at import, chip or not (opening nothing).
    code = ("import jax, mjax\n"
            "for n in ('jax_platforms', 'jax_pjrt_client_create_options'):\n"
            "    print(mjax.config.values[n] == jax.config.values[n], mjax.config.values[n])")
    for env, platforms in [({}, "tpu,cpu"), ({"JAX_PLATFORMS": "cpu"}, "cpu")]:
        run = _child(code, JAX_FORCE_TPU_INIT="1", **env)
        assert run.returncode == 0, run.stderr
        lines = run.stdout.splitlines()
        assert lines[0] == f"True {platforms}"
        assert lines[1].startswith("True ml_framework_name:JAX;ml_framework_version:")
    run = _child("import mjax; print(mjax.config.values['jax_platforms'])", MJAX_PLATFORM="cpu",
                 JAX_FORCE_TPU_INIT="1")
    assert run.stdout.split() == ["None"]       # (mjax's own choice of platform stands)


def test_jax_platforms_naming_a_platform_that_fails_raises_jax_error(tmp_path):
    lib = tmp_path / "libtpu.so"
    lib.write_bytes(b"not a library")
    run = _child("import mjax; mjax.devices()", TPU_LIBRARY_PATH=str(lib), JAX_PLATFORMS="tpu")
    assert run.returncode != 0
    assert "RuntimeError: Unable to initialize backend 'tpu'" in run.stderr
    run = _child("import mjax; mjax.devices()", JAX_PLATFORMS="tpu",
                 TPU_LIBRARY_PATH=str(tmp_path / "none.so"))
    if backend.PLATFORMS["tpu"].find_library() is None:
        assert "no PJRT plugin for platform 'tpu' is installed" in run.stderr


def _chol(x):
    return jnp.linalg.cholesky(x @ x.T + 4 * jnp.eye(x.shape[0])) @ jnp.sin(x)


def test_lower_for_the_tpu_on_a_cpu():
    x = np.arange(16, dtype=np.float32).reshape(4, 4) / 16
    jitted = mjax.jit(_chol)
    cpu = jitted.trace(x).lower(lowering_platforms=("cpu",))
    lowered = jitted.trace(x).lower(lowering_platforms=("tpu",))
    tpu_text = lowered.as_text()
    assert "lapack_spotrf_ffi" in cpu.as_text()
    assert "lapack" not in tpu_text and "stablehlo.cholesky" in tpu_text
    # A module lowered for the platform this process does not run (the TPU's on a CPU,
    # the CPU's on the chip) does not compile here.
    here, other = mjax.default_backend(), ("cpu" if mjax.default_backend() == "tpu" else "tpu")
    with pytest.raises(ValueError, match=f"lowered for the '{other}' platform"):
        (cpu if other == "cpu" else lowered).compile()
    # The trace made for the other platform is not the one later calls here use.
    assert ("lapack_spotrf_ffi" in jitted.lower(x).as_text()) == (here == "cpu")
    np.testing.assert_allclose(np.asarray(jitted(x)), np.asarray(mjax.jit(_chol)(x)))
    with pytest.raises(NotImplementedError, match="several platforms"):
        jitted.trace(x).lower(lowering_platforms=("tpu", "cpu"))
    with pytest.raises(ValueError, match="not a platform"):
        jitted.trace(x).lower(lowering_platforms=("xla",))


def test_platform_dependent_follows_the_lowering_platform():
    f = mjax.jit(lambda x: mjax.lax.platform_dependent(x, cpu=lambda x: x + 1,
                                                       tpu=lambda x: x * 3))
    x = np.float32(2)
    assert "stablehlo.multiply" in f.trace(x).lower(lowering_platforms=("tpu",)).as_text()
    assert "stablehlo.add" in f.trace(x).lower(lowering_platforms=("cpu",)).as_text()
    assert float(f(x)) == {"cpu": 3.0, "tpu": 6.0}[mjax.default_backend()]


def test_export_for_the_tpu_lowers_for_it():
    x = np.ones((4, 4), np.float32)
    exp = mjax.export.export(mjax.jit(_chol), platforms=["tpu"])(x)
    assert exp.platforms == ("tpu",)
    assert "lapack" not in exp.mlir_module()


def test_a_kernel_with_interpret_false_is_never_interpreted_silently():
    from mjax.experimental import pallas as pl

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0
    call = pl.pallas_call(kernel, out_shape=jax_struct((8, 128)))
    x = np.zeros((8, 128), np.float32)
    if mjax.default_backend() == "cpu":
        with pytest.raises(ValueError, match="Only interpret mode is supported on CPU"):
            mjax.jit(call)(x)
    else:       # (on the chip: compiled through Mosaic, as the lowering below shows)
        np.testing.assert_array_equal(mjax.jit(call)(x), x + 1)
    if _mosaic_registered():       # compiled for the TPU through Mosaic
        text = mjax.jit(call).trace(x).lower(lowering_platforms=("tpu",)).as_text()
        assert "tpu_custom_call" in text and "jaxpr." not in text
    else:
        with pytest.raises(NotImplementedError, match="no Pallas compiler"):
            mjax.jit(call).trace(x).lower(lowering_platforms=("tpu",))


def _mosaic_registered() -> bool:
    from mjax.passes.registry import PASSES
    return "jaxpr-pallas-to-mosaic" in PASSES


def jax_struct(shape):
    return mjax.ShapeDtypeStruct(shape, np.float32)


def test_host_callbacks_become_host_transfers_on_a_tpu():
    """On a TPU a Python callback is a send per operand and a recv per non-empty result
    (JAX's form there); a call without operands sends a dummy, an empty result is a
    constant. XLA's CPU has no send/recv, so the chip runs them (benchmarks/tpu_probe.py);
    here the rewrite (--stablehlo-host-callbacks) is checked on a program lowered on
    the CPU."""
    from mjax.dialect import context
    from mjax.tracing.lowering import clone_module
    from mjax.passes.stablehlo_host_callbacks import StablehloHostCallbacksPass

    def f(x):
        y = mjax.pure_callback(lambda a: np.sin(a), mjax.ShapeDtypeStruct(x.shape, x.dtype),
                               x)
        z = mjax.pure_callback(lambda: np.arange(3, dtype=np.float32),
                               mjax.ShapeDtypeStruct((3,), np.float32))
        e = mjax.pure_callback(lambda a: np.zeros((0,), np.float32),
                               mjax.ShapeDtypeStruct((0,), np.float32), x)
        return y, z, e
    x = np.arange(4, dtype=np.float32)
    lowered = mjax.jit(f).lower(x).compiler_ir()

    def rewrite(target):
        module, p = clone_module(lowered), StablehloHostCallbacksPass(target=target)
        with context():
            p.run(module)
        return module.operation.get_asm(), p.sites
    new, calls = rewrite("send-recv")
    assert len(calls) == 3 and "xla_ffi_python_cpu_callback" not in new
    assert [(c.transfers.sends, c.transfers.recvs) for c in calls] == [
        ([1], [2]), ([3], [4]), ([5], [])]
    assert [c.transfers.real for c in calls] == [True, False, True]
    import re
    kinds = re.findall(r'"stablehlo\.(send|recv)".*?handle = (\d+), type = (\d)', new)
    assert [k for k, _, _ in kinds] == ["send", "recv", "send", "recv", "send"]
    assert [int(h) for _, h, _ in kinds] == [1, 2, 3, 4, 5]     # one channel each
    assert all(t == ("2" if k == "send" else "3") for k, _, t in kinds)
    assert new.count('_xla_host_transfer_handler_name = "pjrt_rendezvous"') == 5
    # (on the CPU the callback custom call stays)
    assert rewrite("xla_ffi_python_cpu_callback")[0].count(
        "xla_ffi_python_cpu_callback") == 3


def test_mosaic_serde_version_follows_the_chip_compiled_for():
    """Kernels lowered for export or for another platform use serde version 11 (JAX's
    forward-compatible form); compiled on a chip, the newest its libtpu reads."""
    from mjax.passes.jaxpr_pallas_to_mosaic import serde_version_on_chip
    tpu = backend.PLATFORMS["tpu"]
    options = dict(pipeline_for(tpu))
    assert options["jaxpr-pallas-to-mosaic"] == ""          # the pass's default: 11
    new = "PJRT C API\nTFRT TPU v5 lite\nBuilt on Jun 17 2026 (1781740000) cl/1"
    old = "PJRT C API\nTFRT TPU v5 lite\nBuilt on Jan 5 2026 (1767600000) cl/1"
    assert dict(pipeline_for(tpu, new))["jaxpr-pallas-to-mosaic"] == "target-version=0"
    assert serde_version_on_chip(old) == 11 and serde_version_on_chip(new) == 0
