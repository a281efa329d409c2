"""shard_map called outside jit runs its body per device in JAX, so no batching rule of a
custom_vmap function in the body runs; mjax runs that body vmapped over the mesh axes and
must batch such calls as any other (compared with JAX, a test-only oracle)."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp


def _run(api, np_, use_jit=False, vmapped_body=False):
    """shard_map of a custom_vmap function (vmapped inside the body if asked) over 4
    devices: (result, the axis sizes its vmap rule was called with)."""
    calls = []

    @api.custom_batching.custom_vmap
    def f(x):
        return np_.sin(x)

    @f.def_vmap
    def rule(axis_size, in_batched, x):
        calls.append(axis_size)
        return np_.cos(x), in_batched[0]

    mesh = api.make_mesh((4,), ("i",), axis_types=(api.sharding.AxisType.Explicit,))
    g = api.shard_map(api.vmap(f) if vmapped_body else f, mesh=mesh, in_specs=api.P("i"),
                      out_specs=api.P("i"))
    if use_jit:
        g = api.jit(g)
    x = np_.arange(8.0).reshape(4, 2) if vmapped_body else np_.arange(8.0)
    x = api.device_put(x, api.NamedSharding(mesh, api.P("i")))
    return np.asarray(g(x)), calls


@pytest.mark.parametrize("use_jit", [False, True])
def test_custom_vmap_rule_is_not_called_by_shard_map(use_jit):
    (got, got_calls), (want, want_calls) = _run(mjax, jnp, use_jit), _run(jax, jjnp, use_jit)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got_calls == want_calls == []


def test_a_vmap_in_the_body_still_calls_the_rule():
    (got, got_calls), (want, want_calls) = (_run(mjax, jnp, vmapped_body=True),
                                            _run(jax, jjnp, vmapped_body=True))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got_calls and want_calls
