"""The NaN-ignoring reductions against jax.numpy, under jit and eagerly."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
import mjax
from frontend_util import check
import mjax.numpy as jnp


RNG = np.random.default_rng(2)
A = RNG.uniform(-3, 3, (3, 4)).astype(np.float32)
NANS = np.where(RNG.uniform(size=(3, 4)) < 0.3, np.nan, A).astype(np.float32)
NANS[2] = np.nan                                   # one all-NaN row
INTS = RNG.integers(0, 6, (10,)).astype(np.int32)
NAN_FNS = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanargmax", "nanargmin",
           "nanvar", "nanstd"]


def _nan_outputs(np_, x):
    out = {}
    for name in NAN_FNS:
        f = getattr(np_, name)
        out[name] = f(x)
        out[name + "_1"] = f(x, axis=1)
        if name not in ("nanargmax", "nanargmin"):
            out[name + "_0k"] = f(x, axis=0, keepdims=True)
    out["nancumsum"] = np_.nancumsum(x, axis=1)
    out["nancumprod"] = np_.nancumprod(x)
    out["nanvar_ddof"] = np_.nanvar(x, axis=1, ddof=1)
    return out


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_functions_match_jax_under_jit_and_eagerly():
    got = mjax.jit(lambda x: _nan_outputs(jnp, x))(NANS)
    want = _nan_outputs(jjnp, jjnp.asarray(NANS))
    assert sorted(got) == sorted(want)
    for k in want:
        check(got[k], want[k], rtol=2e-5, atol=1e-5)
    check(jnp.nanmean(NANS, axis=1), np.nanmean(NANS, axis=1))
    check(jnp.nanmax(NANS, axis=0), np.nanmax(NANS, axis=0))
    check(jnp.nanargmin(NANS[:2], axis=1), np.nanargmin(NANS[:2], axis=1).astype(np.int32))
    check(jnp.nansum(INTS), np.int32(INTS.sum()))
    check(jnp.nanmax(INTS), INTS.max())
    g = mjax.grad(lambda x: jnp.nanmean(jnp.sin(x)) + jnp.nanmax(x))(NANS[:2])
    check(g, jax.grad(lambda x: jjnp.nanmean(jjnp.sin(x)) + jjnp.nanmax(x))(NANS[:2]))
