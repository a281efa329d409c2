"""Smaller top-level names of JAX's API, each run on mjax and on JAX: `jax.ds` indexing of
refs, `jax.Shard`, `make_user_context`, `allow_f16_reductions`, `no_tracing` /
`no_execution`, `process_indices` and the deprecated `host_*` aliases,
`copy_to_host_async`, `print_environment_info`."""
from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest

import mjax


LIBS = [pytest.param(mjax, id="mjax"), pytest.param(jax, id="jax")]


def _ds_program(lib):
    jnp = lib.numpy
    out = []
    r = lib.new_ref(jnp.arange(6.))
    out += [r[lib.ds(1, 2)], r[lib.ds(0, 3)], r[lib.ds(4)]]

    @lib.jit
    def f(r, i):
        r[lib.ds(i, 2)] = jnp.zeros(2)
        r[lib.ds(1, 2)] += 10.
        return r[lib.ds(i, 3)]
    out += [f(r, 1), r[...], f(r, 5), r[...]]   # (a traced start is clamped)
    r2 = lib.new_ref(jnp.arange(12.).reshape(3, 4))
    r2[lib.ds(1, 2), lib.ds(0, 2, 2)] = -jnp.ones((2, 2))
    out.append(r2[...])

    def g(x, i):
        r = lib.new_ref(x)
        r[lib.ds(i, 2)] = r[lib.ds(i, 2)] * 2
        return lib.freeze(r)
    out += [lib.jit(g)(jnp.arange(5.), 2),
            lib.grad(lambda x: jnp.sum(g(x, 1) ** 2))(jnp.arange(5.))]
    return [np.asarray(o) for o in out]


def test_ds_indexes_refs_as_jax():
    for mine, theirs in zip(_ds_program(mjax), _ds_program(jax), strict=True):
        np.testing.assert_array_equal(mine, theirs)


def _ds_array_program(lib):
    jnp = lib.numpy
    x = jnp.arange(6.).reshape(3, 2)
    f = lib.jit(lambda x, i: x[lib.ds(i, 2)])
    out = [f(x, 0), f(x, 2), f(x, -1), x[lib.ds(1, 2)], x[lib.ds(2, 2)]]   # (clamped)
    out.append(lib.jit(lambda x, i: x.at[lib.ds(i, 2)].set(0.))(x, 2))   # (dropped)
    out.append(lib.jit(lambda x, i: x.at[lib.ds(i, 2)].add(1.))(x, 1))
    out.append(lib.jit(lambda x, i: x[:, lib.ds(i, 1, 1)])(x, 1))
    out.append(lib.jit(lambda x, i: x[lib.ds(i, 2, 2)])(jnp.arange(6.), 1))
    out += [x[lib.ds(1, 2), 1], x[None, lib.ds(0, 2), jnp.array([1, 0])]]
    out.append(lib.grad(lambda x: x[lib.ds(1, 2)].sum())(x))
    out.append(lib.vmap(lambda x, i: x[lib.ds(i, 2)])(jnp.stack([x, x + 10]),
                                                      jnp.array([0, 1])))
    out += [x.at[lib.ds(1, 2)].get(mode="fill"),
            x.at[lib.ds(2, 2)].get(mode="fill", fill_value=-1)]
    return [np.asarray(o) for o in out]


def test_ds_indexes_arrays_as_jax():
    for mine, theirs in zip(_ds_array_program(mjax), _ds_array_program(jax), strict=True):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("bad, message", [((5, 3), "start=5, size=3, stride=1, dim=6"),
                                          ((6, 1), "start=6, dim=6")])
def test_ds_out_of_bounds(lib, bad, message):
    r = lib.new_ref(lib.numpy.arange(6.))
    with pytest.raises(ValueError, match=f"Out of bound slice: {message}"):
        r[lib.ds(*bad)]


def test_ds_vmapped_start():
    # (JAX refuses a batched jax.ds start; mjax gathers, giving what a loop gives)
    jnp = mjax.numpy

    def g(x, i):
        r = mjax.new_ref(x)
        r[mjax.ds(i, 2)] = r[mjax.ds(i, 2)] * 2
        return mjax.freeze(r)
    x = jnp.arange(5.)
    got = mjax.vmap(g, in_axes=(None, 0))(x, jnp.array([0, 3]))
    np.testing.assert_array_equal(got, np.stack([g(x, 0), g(x, 3)]))


def test_shard_made_as_jax_makes_it(monkeypatch):
    x = mjax.device_put(mjax.numpy.arange(4.))
    (shard,) = x.addressable_shards
    assert isinstance(shard, mjax.Shard)
    made = mjax.Shard(shard.device, x.sharding, x.shape, x)
    assert made.index == shard.index == (slice(None),)
    assert made.replica_id == 0 and made.data is x
    assert repr(made).startswith("Shard(device=")
    theirs = jax.Shard(jax.devices()[0], jax.sharding.SingleDeviceSharding(jax.devices()[0]),
                       (4,), None)
    assert theirs.index == made.index and theirs.replica_id == made.replica_id


@pytest.mark.parametrize("lib", LIBS)
def test_make_user_context_retraces(lib):
    traces = []

    @lib.jit
    def f(x):
        traces.append(ctx.value)
        return x * 2
    ctx = lib.make_user_context(default_value=0)
    f(1.)
    with ctx(1):
        f(1.)
        f(1.)
    with ctx(2):
        f(1.)
    f(1.)
    assert traces == [0, 1, 2]
    assert ctx.get_global() == 0


@pytest.mark.parametrize("lib", LIBS)
def test_allow_f16_reductions(lib):
    x = lib.numpy.ones((3,), np.float16)
    assert float(lib.lax.reduce_sum(x, (0,))) == 3.0
    with lib.allow_f16_reductions(False):
        with pytest.raises(ValueError, match=r"reduce_sum on operand f16\[3\] is not "
                                             r"allowed when jax_allow_f16_reductions=False"):
            lib.lax.reduce_sum(x, (0,))
        one = lib.numpy.ones((1, 3), lib.numpy.bfloat16)    # (a size-1 axis is allowed)
        assert lib.lax.reduce_sum(one, (0,)).shape == (3,)


@pytest.mark.parametrize("lib", LIBS)
def test_no_tracing_and_no_execution(lib):
    f = lib.jit(lambda x: x + 1)
    x = lib.numpy.ones((2,))
    f(x)
    with lib.no_tracing(True):
        f(x)                                    # (cached: no tracing)
        with pytest.raises(RuntimeError, match="no_tracing"):
            f(lib.numpy.ones((3,)))
    with lib.no_execution(True):
        with pytest.raises(RuntimeError, match="no_execution"):
            f(x)
        with pytest.raises(RuntimeError, match="no_execution"):
            lib.numpy.sin(x)
    np.testing.assert_array_equal(f(x), [2., 2.])


@pytest.mark.parametrize("lib", LIBS)
def test_processes_and_renamed_aliases(lib):
    assert lib.process_indices() == [0]
    for old, new in (("host_count", 1), ("host_id", 0), ("host_ids", [0])):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert getattr(lib, old)() == new
        assert any("renamed" in str(w.message) for w in caught)


@pytest.mark.parametrize("lib", LIBS)
def test_copy_to_host_async(lib):
    tree = {"a": lib.numpy.arange(3.), "b": [np.ones(2), 3]}
    assert lib.copy_to_host_async(tree) is tree


def test_print_environment_info(capsys):
    text = mjax.print_environment_info(return_string=True)
    assert "jaxlib: 0.10.2" in text and "numpy:" in text and "process_count: 1" in text
    assert mjax.print_environment_info() is None
    assert capsys.readouterr().out.strip() == text.strip()
