"""mjax.ops.segment_* against jax, with gradients."""
import jax
import numpy as np
import pytest

import mjax
from frontend_util import check

RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---- mjax.ops.segment_* ------------------------------------------------------------------
@pytest.mark.parametrize("name", ["segment_sum", "segment_prod", "segment_max",
                                  "segment_min"])
def test_segment_ops_match_jax(name):
    data = rand(8, 3)
    ids = np.array([0, 2, 2, -1, 5, 1, 0, 9])  # -1 and 9 are out of range for 6 segments
    fn, jfn = getattr(mjax.ops, name), getattr(jax.ops, name)
    check(fn(data, ids, num_segments=6), jfn(data, ids, num_segments=6), rtol=1e-5)
    check(fn(data, ids, 6, mode="clip"), jfn(data, ids, 6, mode="clip"), rtol=1e-5)
    sorted_ids = np.array([0, 0, 1, 1, 1, 3, 3, 3])
    check(fn(data, sorted_ids), jfn(data, sorted_ids), rtol=1e-5)
    check(fn(data, sorted_ids, 4, bucket_size=3), jfn(data, sorted_ids, 4, bucket_size=3),
          rtol=1e-5)
    di = RNG.integers(-5, 5, (8,)).astype(np.int32)
    check(fn(di, sorted_ids, 5), jfn(di, sorted_ids, 5))
    check(mjax.jit(lambda d, i: fn(d, i, num_segments=4))(data, sorted_ids),
          jfn(data, sorted_ids, num_segments=4), rtol=1e-5)


def test_segment_sum_grad_and_errors():
    data = rand(6, 2)
    ids = np.array([0, 1, 1, 2, 0, 2])
    w = rand(3, 2)
    check(mjax.grad(lambda d: (mjax.ops.segment_sum(d, ids, 3) * w).sum())(data),
          jax.grad(lambda d: (jax.ops.segment_sum(d, ids, 3) * w).sum())(data))
    check(mjax.grad(lambda d: (mjax.ops.segment_max(d, ids, 3) * w).sum())(data),
          jax.grad(lambda d: (jax.ops.segment_max(d, ids, 3) * w).sum())(data))
    with pytest.raises(ValueError, match="non-negative"):
        mjax.ops.segment_sum(data, ids, -1)
    with pytest.raises(TypeError, match="num_segments"):
        mjax.jit(lambda d, i: mjax.ops.segment_sum(d, i))(data, ids)
