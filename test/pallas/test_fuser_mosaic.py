"""The fused matmul kernel (fuser_programs.py, interpret=False) lowered for the TPU on
this CPU machine by jax and by mjax (each library's tpu_info answering as a v5e): the
same Mosaic module and tpu_custom_call attributes (test_mosaic_differential.py's
comparison). The kernel's name differs: JAX's is `physicalize_interp`, the function its
`fuse` runs the program through (fusible_dtype.physicalize resolves its fusion dtypes);
mjax's is the kernel function's."""
import re

import numpy as np
import pytest

import jax
import mjax
from fuser_programs import fusible_matmul, namespace
from test_mosaic_differential import assert_compiled_as_jax, assert_same_mosaic, tpu_mosaic

F32 = np.float32
CASES = {
    "plain": ([((16, 256), F32), ((256, 256), F32)],
              lambda ns: lambda x, y: fusible_matmul(ns, x, y, interpret=False)),
    "input_and_output_ops": (
        [((16, 256), F32), ((256, 256), F32), ((256,), F32)],
        lambda ns: lambda x, y, b: ns.jnp.maximum(
            fusible_matmul(ns, ns.jnp.tanh(x), y, interpret=False)
            + ns.jnp.expand_dims(b, 0), 0.0)),
    "dynamic_slice": (
        [((16, 256), F32), ((512, 256), F32), ((), np.int32)],
        lambda ns: lambda x, y, i: fusible_matmul(
            ns, x, ns.lax.dynamic_slice(y, (i * 128, 0), (256, 256)), interpret=False)),
    "rhs_transpose": ([((16, 256), F32), ((256, 256), F32)],
                      lambda ns: lambda x, y: fusible_matmul(ns, x, y.T + 1,
                                                             interpret=False)),
    "concat": ([((16, 256), F32), ((128, 256), F32), ((128, 256), F32)],
               lambda ns: lambda x, a, b: fusible_matmul(
                   ns, x, ns.jnp.concatenate([a, b], axis=0), interpret=False)),
    "reduce_sum": ([((16, 256), F32), ((256, 256), F32)],
                   lambda ns: lambda x, y: ns.jnp.sum(
                       fusible_matmul(ns, x, y, bm=16, bn=256, interpret=False), axis=1)),
    "relu_bf16": ([((16, 256), F32), ((256, 256), F32)],
                  lambda ns: lambda x, y: ns.jax.nn.relu(
                      fusible_matmul(ns, x, y, interpret=False)).astype(ns.jnp.bfloat16)),
}
# case -> why the modules are compared after canonicalize,cse (constants by value)
CANONICAL = {
    "dynamic_slice": "JAX's block index of a traced slice start also traces a checkify "
                     "debug check (start % block == 0) whose operands its lowering "
                     "computes, dropping the check; mjax's fuser rule stages no check "
                     "(and mjax's Mosaic lowering has no rule for a debug check yet)",
}


def _without_name(config: str) -> str:
    return re.sub(r"'kernel_name': '[^']*'", "", config)


@pytest.mark.parametrize("name", list(CASES))
def test_fused_matmul_mosaic_matches_jax(name):
    shapes, build = CASES[name]
    (jc, jt), (mc, mt) = (
        tpu_mosaic(J, namespace(lib).fuser.fuse(build(namespace(lib))), shapes, v5e=True)
        for J, lib in ((jax, "jax"), (mjax, "mjax")))
    assert _without_name(mc) == _without_name(jc)
    assert_same_mosaic(jt, mt, canonical=name in CANONICAL)


@pytest.mark.parametrize("name", list(CASES))
def test_fused_matmul_compiled_as_jax(name):
    """Compiled: on the chip (MJAX_TEST_TPU=1) mjax's fused kernel gives JAX's outputs
    bit for bit; off it both refuse, as test_mosaic_differential's kernels."""
    shapes, build = CASES[name]
    rng = np.random.default_rng(0)
    args = [np.asarray(rng.integers(0, 3), d) if s == () else
            rng.standard_normal(s).astype(d) for s, d in shapes]
    jax_f, mjax_f = (J.jit(namespace(lib).fuser.fuse(build(namespace(lib))))
                     for J, lib in ((jax, "jax"), (mjax, "mjax")))
    assert_compiled_as_jax(jax_f, mjax_f, args)
