"""Collectives over groups of a pmap axis's members (`axis_index_groups=`) against jax:
values, dtypes, gradients and JAX's errors for groups that do not partition the axis."""
import jax
import numpy as np
import pytest

import mjax
from frontend_util import check

X = (np.arange(32, dtype=np.float32).reshape(4, 8) ** 1.5).astype(np.float32)
XI = np.arange(32, dtype=np.int32).reshape(4, 8) % 7
G = [[0, 2], [3, 1]]
UNEVEN = [[0], [1, 2, 3]]

CASES = {
    "psum": (lambda lax: lambda v: lax.psum(v, "i", axis_index_groups=G), X),
    "psum_uneven": (lambda lax: lambda v: lax.psum(v, "i", axis_index_groups=UNEVEN), X),
    "psum_int": (lambda lax: lambda v: lax.psum(v, "i", axis_index_groups=G), XI),
    "psum_bool": (lambda lax: lambda v: lax.psum(v > 3, "i", axis_index_groups=G), XI),
    "pmax": (lambda lax: lambda v: lax.pmax(v, "i", axis_index_groups=G), X),
    "pmin_int": (lambda lax: lambda v: lax.pmin(v, "i", axis_index_groups=UNEVEN), XI),
    "pmean": (lambda lax: lambda v: lax.pmean(v, "i", axis_index_groups=G), X),
    "pmean_int": (lambda lax: lambda v: lax.pmean(v, "i", axis_index_groups=G), XI),
    "all_gather": (lambda lax: lambda v: lax.all_gather(v, "i", axis_index_groups=G), X),
    "all_gather_axis1": (lambda lax: lambda v: lax.all_gather(v, "i", axis_index_groups=G,
                                                              axis=1), X),
    "all_gather_tiled": (lambda lax: lambda v: lax.all_gather(v, "i", axis_index_groups=G,
                                                              tiled=True), X),
    "psum_scatter_tiled": (lambda lax: lambda v: lax.psum_scatter(
        v, "i", axis_index_groups=G, tiled=True), X),
    "psum_scatter": (lambda lax: lambda v: lax.psum_scatter(v[:2], "i",
                                                            axis_index_groups=G), X),
    "all_to_all_tiled": (lambda lax: lambda v: lax.all_to_all(
        v, "i", 0, 0, axis_index_groups=G, tiled=True), X),
    "all_to_all_0_1": (lambda lax: lambda v: lax.all_to_all(
        v.reshape(2, 4), "i", 0, 1, axis_index_groups=G), X),
    "all_to_all_1_0": (lambda lax: lambda v: lax.all_to_all(
        v.reshape(4, 2), "i", 1, 0, axis_index_groups=G), X),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_grouped_collective_matches_jax(case):
    make, x = CASES[case]
    want = jax.pmap(make(jax.lax), axis_name="i")(x)
    got = mjax.pmap(make(mjax.lax), axis_name="i")(x)
    assert got.dtype == want.dtype
    check(got, want)


@pytest.mark.parametrize("op", ["psum", "all_gather"])
def test_grouped_collective_gradient_matches_jax(op):
    def make(lib):
        def loss(w):
            y = getattr(lib.lax, op)(w * w, "i", axis_index_groups=G)
            return (y * lib.numpy.arange(y.size, dtype=y.dtype).reshape(y.shape)).sum()
        return lambda v: lib.grad(loss)(v)
    check(mjax.pmap(make(mjax), axis_name="i")(X), jax.pmap(make(jax), axis_name="i")(X))


def test_groups_that_do_not_partition_the_axis_raise():
    for lib in (jax, mjax):
        with pytest.raises(ValueError, match="cover all indices exactly once"):
            lib.pmap(lambda v: lib.lax.psum(v, "i", axis_index_groups=[[0, 1], [1, 2]]),
                     axis_name="i")(X)
        with pytest.raises(ValueError):       # all_gather's groups must be one size
            lib.pmap(lambda v: lib.lax.all_gather(v, "i", axis_index_groups=UNEVEN),
                     axis_name="i")(X)
    with pytest.raises(ValueError, match="cover 2 members, but the axis has 4"):
        mjax.pmap(lambda v: mjax.lax.psum(v, "i", axis_index_groups=[[0, 1]]),
                  axis_name="i")(X)
