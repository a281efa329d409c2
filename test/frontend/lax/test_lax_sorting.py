"""top_k, approx_max_k / approx_min_k, sort and sort_key_val against jax, with
gradients and vmap."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import lax
from mjax.test_util import check_grads
from frontend_util import check, x64

RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---- top_k, approx_max_k / approx_min_k, sort ------------------------------------------
def test_top_k_matches_jax():
    x = rand(3, 7)
    x[0, :4] = 1.0  # ties go to the lower index
    xi = RNG.integers(-5, 5, (4, 6)).astype(np.int32)
    for arr, k, axis in [(x, 3, -1), (x, 2, 0), (xi, 6, 1), (xi, 0, 1), (x[0], 7, 0)]:
        got, want = lax.top_k(arr, k, axis=axis), jax.lax.top_k(arr, k, axis=axis)
        check(got[0], want[0])
        check(got[1], want[1])
    got = mjax.jit(lambda x: lax.top_k(x, 2))(x)
    check(got[1], jax.lax.top_k(x, 2)[1])
    with pytest.raises(ValueError, match="no larger than size along axis"):
        lax.top_k(x, 8)
    with pytest.raises(ValueError, match="nonnegative"):
        lax.top_k(x, -1)


def test_top_k_grads_and_vmap():
    x = RNG.permutation(21).reshape(3, 7).astype(np.float32)
    f = lambda x: lax.top_k(jnp.sin(x), 3, axis=0)[0]  # noqa: E731
    jf = lambda x: jax.lax.top_k(jjnp.sin(x), 3, axis=0)[0]  # noqa: E731
    ct = rand(3, 7)
    check(mjax.grad(lambda x: (f(x) * ct).sum())(x), jax.grad(lambda x: (jf(x) * ct).sum())(x))
    with x64():
        check_grads(lambda x: lax.top_k(x, 2)[0], (x.astype(np.float64),), order=2)
    xs = rand(4, 3, 7)
    for axis in (0, 1, 2):
        got = mjax.vmap(lambda x: lax.top_k(x, 2), axis)(xs)
        want = jax.vmap(lambda x: jax.lax.top_k(x, 2), axis)(xs)
        check(got[0], want[0])
        check(got[1], want[1])


def test_approx_max_min_k_match_jax():
    x = rand(4, 50)
    for fn, jfn in [(lax.approx_max_k, jax.lax.approx_max_k),
                    (lax.approx_min_k, jax.lax.approx_min_k)]:
        for kw in [dict(k=5), dict(k=3, reduction_dimension=0),
                   dict(k=4, recall_target=0.5, aggregate_to_topk=False)]:
            got, want = fn(x, **kw), jfn(x, **kw)
            check(got[0], want[0])
            check(got[1], want[1])
    with pytest.raises(ValueError, match="floating"):
        lax.approx_max_k(np.arange(5), 2)


def test_sort_num_keys_and_sort_key_val():
    a = RNG.integers(0, 3, (2, 9)).astype(np.int32)
    b = rand(2, 9)
    c = rand(2, 9)
    for num_keys in (1, 2):
        got = lax.sort((a, b, c), dimension=1, num_keys=num_keys)
        want = jax.lax.sort((a, b, c), dimension=1, num_keys=num_keys)
        for g, w in zip(got, want):
            check(g, w)
    for g, w in zip(lax.sort_key_val(b, a, dimension=0), jax.lax.sort_key_val(b, a, dimension=0)):
        check(g, w)
