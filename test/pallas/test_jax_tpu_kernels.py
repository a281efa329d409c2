"""JAX's own Pallas TPU kernels (jax.experimental.pallas.ops.tpu: matmul, flash attention
forward and gradient, megablox gmm and its gradient, paged attention, splash attention)
run unmodified as user code on mjax (`python -m mjax`, so `import jax` is mjax) in TPU
interpret mode, and give real jax's values. Each library runs
test/pallas/jax_tpu_kernels.py in a child process, so real jax and the alias never share
a process."""
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "jax_tpu_kernels.py")
ROOT = os.path.dirname(os.path.dirname(HERE))


def _ops_dir() -> str:
    import jax
    return os.path.join(os.path.dirname(jax.__file__), "experimental", "pallas", "ops",
                        "tpu")


def _run(args, out, kernel):
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("MJAX_ALIAS_JAX", None)
    proc = subprocess.run([sys.executable, *args, SCRIPT, _ops_dir(), out, kernel],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return np.load(out)[kernel]


def _check(kernel, tmp_path):
    ours = _run(["-m", "mjax"], str(tmp_path / "mjax.npz"), kernel)
    theirs = _run([], str(tmp_path / "jax.npz"), kernel)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert np.isfinite(ours).all()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
    return ours


# (one function per kernel: the fast tier keeps one case of a parametrized test)
def test_jax_matmul_kernel(tmp_path):
    ours = _check("matmul", tmp_path)
    x, y = (np.random.default_rng(s).standard_normal((256, 256)).astype(np.float32)
            for s in (0, 1))
    np.testing.assert_allclose(ours, x @ y, rtol=1e-4, atol=1e-3)   # and NumPy's


def test_jax_flash_attention_forward_kernel(tmp_path):
    _check("flash_attention", tmp_path)


def test_jax_flash_attention_gradient(tmp_path):
    _check("flash_attention_grad", tmp_path)


def test_jax_megablox_gmm_kernel(tmp_path):
    _check("gmm", tmp_path)


def test_jax_megablox_gmm_gradient(tmp_path):
    # (megablox.ops.gmm: a custom_vjp over the gmm and tgmm kernels)
    _check("gmm_grad", tmp_path)


def test_jax_paged_attention_kernel(tmp_path):
    _check("paged_attention", tmp_path)


def test_jax_splash_attention_forward_and_gradient(tmp_path):
    _check("splash_attention", tmp_path)
