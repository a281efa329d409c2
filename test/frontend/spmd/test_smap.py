"""`smap` (shard_map over one mesh axis, specs as vmap-style axes) against JAX's."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import mjax


def _program(lib, axis_type):
    jnp = lib.numpy
    mesh = lib.make_mesh((4,), ("x",), axis_types=(axis_type(lib),))
    out = []
    with lib.set_mesh(mesh):
        x = jnp.arange(16.).reshape(8, 2)
        f = lib.smap(lambda a, b: a * 2 + b, in_axes=(0, None), out_axes=0, axis_name="x")
        out.append(f(x, jnp.ones(2)))
        g = lib.smap(lambda a: lib.lax.psum(a.sum(), "x"), in_axes=1, out_axes=None,
                     axis_name="x")
        out.append(g(jnp.arange(8.).reshape(2, 4)))
        out.append(lib.jit(f)(x, jnp.ones(2)))

        @lib.smap(in_axes=0, out_axes=1, axis_name="x")
        def h(a):
            return a.T
        out.append(h(x))
    return [np.asarray(o) for o in out]


def test_smap_as_jax():
    for mine, theirs in zip(_program(mjax, lambda lib: lib.sharding.AxisType.Auto),
                            _program(jax, lambda lib: lib.sharding.AxisType.Auto),
                            strict=True):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("lib", [mjax, jax], ids=["mjax", "jax"])
@pytest.mark.parametrize("bad, message", [
    (dict(in_axes=[0], out_axes=0), "smap in_axes must be an int, None"),
    (dict(in_axes=0.5, out_axes=0), "smap in_axes must be an int, None"),
    (dict(in_axes=0, out_axes="a"), "smap out_axes must be an int, None"),
    (dict(in_axes=0, out_axes=0, axis_name=("x",)), "smap axis_name should be a `str`")])
def test_smap_argument_errors(lib, bad, message):
    kwargs = {"axis_name": "x", **bad}
    with pytest.raises(TypeError, match=message):
        lib.smap(lambda a: a, **kwargs)
