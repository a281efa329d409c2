"""Attributes of arrays, key arrays, shardings and meshes that JAX users read: the same
values, and the same exception classes and words where JAX refuses, compared with jax."""
import collections
import re

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp

LIBS = {"jax": (jax, jjnp), "mjax": (mjax, jnp)}


def _outcome(fn):
    """('ok', value) or (exception class name, message) of fn()."""
    try:
        return "ok", fn()
    except Exception as e:          # noqa: BLE001 - the class is what is compared
        # (mjax's messages may end by naming the user's line: " (at file:line:col)")
        return type(e).__name__, re.sub(r" \(at [^()]*\)$", "", str(e))


def _both(make):
    return {name: _outcome(lambda: make(*libs)) for name, libs in LIBS.items()}


def _assert_same(got):
    """mjax's outcome is jax's: the same exception class and words, or equal values."""
    (jc, jv), (mc, mv) = got["jax"], got["mjax"]
    assert mc == jc, got
    if jc == "ok" and isinstance(jv, (np.ndarray, jax.Array)):
        np.testing.assert_array_equal(np.asarray(mv), np.asarray(jv))
    else:
        assert mv == jv, got


# ---- key arrays: JAX's abstract Array methods raise, data methods forward -----------------
KEY_CASES = {
    "astype": lambda J, np_: J.random.key(0).astype("float32"),
    "sum": lambda J, np_: J.random.split(J.random.key(0), 3).sum(),
    "argsort": lambda J, np_: J.random.split(J.random.key(0), 3).argsort(),
    "item": lambda J, np_: J.random.key(0).item(),
    "flat": lambda J, np_: J.random.key(0).flat,
    "real": lambda J, np_: J.random.key(0).real,
    "round": lambda J, np_: round(J.random.key(0)),
    "asarray_float": lambda J, np_: np_.asarray(J.random.key(0), dtype="float32"),
    "traced_astype": lambda J, np_: J.jit(lambda k: k.astype("float32"))(J.random.key(0)),
    "take": lambda J, np_: np.asarray(J.random.key_data(
        J.random.split(J.random.key(0), 3).take(np_.array([2, 0, 7])))),
    "take_axis": lambda J, np_: np.asarray(J.random.key_data(
        J.random.split(J.random.key(0), (2, 3)).take(np_.array([1]), axis=1))),
    "take_traced": lambda J, np_: np.asarray(J.random.key_data(
        J.jit(lambda k: k.take(1))(J.random.split(J.random.key(0), 3)))),
    "aval": lambda J, np_: str(J.random.split(J.random.key(0), 4).aval),
    "nbytes": lambda J, np_: J.random.split(J.random.key(0), 4).nbytes,
    "committed": lambda J, np_: J.random.key(0).committed,
    "fully_addressable": lambda J, np_: J.random.key(0).is_fully_addressable,
    "shard_index": lambda J, np_: [s.index for s in
                                   J.random.split(J.random.key(0), 4).addressable_shards],
    "shard_data": lambda J, np_: str(J.typeof(
        J.random.split(J.random.key(0), 4).addressable_data(0))),
}


@pytest.mark.parametrize("case", sorted(KEY_CASES))
def test_key_array_attribute_as_jax(case):
    _assert_same(_both(KEY_CASES[case]))


# ---- arrays -------------------------------------------------------------------------------
ARRAY_CASES = {
    "flat": lambda J, np_: np_.arange(3.0).flat,
    "mT_1d": lambda J, np_: np_.arange(3.0).mT,
    "mT_traced_1d": lambda J, np_: J.jit(lambda x: x.mT)(np_.arange(3.0)),
    "matrix_transpose_1d": lambda J, np_: np_.matrix_transpose(np_.arange(3.0)),
    "linalg_matrix_transpose_1d": lambda J, np_: np_.linalg.matrix_transpose(
        np_.arange(3.0)),
    "mT": lambda J, np_: np.asarray(np_.arange(6.0).reshape(1, 2, 3).mT),
    "fully_addressable": lambda J, np_: np_.arange(3.0).is_fully_addressable,
    "platform": lambda J, np_: np_.arange(3.0).platform(),
}


@pytest.mark.parametrize("case", sorted(ARRAY_CASES))
def test_array_attribute_as_jax(case):
    _assert_same(_both(ARRAY_CASES[case]))


# ---- shardings' memory kinds and meshes ---------------------------------------------------
def _mesh(J):
    return J.sharding.Mesh(np.array(J.devices()[:1]).reshape(1, 1), ("x", "y"))


SHARDING_CASES = {
    "named_repr": lambda J: repr(J.sharding.NamedSharding(_mesh(J), J.sharding.PartitionSpec(
        "x", "y"), memory_kind="device")),
    "with_memory_kind": lambda J: repr(J.sharding.NamedSharding(
        _mesh(J), J.sharding.PartitionSpec("x")).with_memory_kind("pinned_host")),
    "memory_kind": lambda J: J.sharding.NamedSharding(
        _mesh(J), J.sharding.PartitionSpec()).with_memory_kind("unpinned_host").memory_kind,
    "kinds_differ": lambda J: J.sharding.NamedSharding(
        _mesh(J), J.sharding.PartitionSpec()) == J.sharding.NamedSharding(
        _mesh(J), J.sharding.PartitionSpec(), memory_kind="pinned_host"),
    "single_repr": lambda J: repr(J.sharding.SingleDeviceSharding(
        J.devices()[0], memory_kind="pinned_host")),
    "single_kinds_differ": lambda J: J.sharding.SingleDeviceSharding(J.devices()[0]) ==
        J.sharding.SingleDeviceSharding(J.devices()[0]).with_memory_kind("pinned_host"),
    "bad_kind": lambda J: J.sharding.SingleDeviceSharding(J.devices()[0], memory_kind="hbm"),
    "bad_kind_named": lambda J: J.sharding.NamedSharding(
        _mesh(J), J.sharding.PartitionSpec(), memory_kind="hbm"),
    "addressable": lambda J: (J.sharding.SingleDeviceSharding(
        J.devices()[0]).is_fully_addressable, J.sharding.NamedSharding(
        _mesh(J), J.sharding.PartitionSpec()).has_addressable_devices),
    "mesh_shape_tuple": lambda J: _mesh(J).shape_tuple,
    "mesh_flags": lambda J: (_mesh(J).empty, _mesh(J).is_multi_process,
                             _mesh(J).local_mesh == _mesh(J)),
}


@pytest.mark.parametrize("case", sorted(SHARDING_CASES))
def test_sharding_attribute_as_jax(case):
    got = {name: _outcome(lambda: SHARDING_CASES[case](libs[0]))
           for name, libs in LIBS.items()}
    assert got["mjax"] == got["jax"]


@pytest.mark.parametrize("where", ["device_put", "out_shardings", "in_shardings"])
def test_host_memory_kinds_as_jax(where):
    # Arrays in host memory (test_memory_kinds.py has the rest): placed there by
    # device_put or a jit's out_shardings, and a jit's in_shardings in host memory
    # refusing an argument in device memory (JAX's ValueError), as JAX.
    def run(J):
        s = J.sharding.NamedSharding(_mesh(J), J.sharding.PartitionSpec(),
                                     memory_kind="pinned_host")
        x = J.numpy.arange(4.0)
        if where == "device_put":
            y = J.device_put(x, s)
        elif where == "out_shardings":
            y = J.jit(lambda v: v + 1, out_shardings=s)(x)
        else:
            y = J.jit(lambda v: v, in_shardings=s)(x)
        return y.sharding.memory_kind, np.asarray(y).tolist()
    got = {name: _outcome(lambda: run(libs[0])) for name, libs in LIBS.items()}
    assert got["mjax"] == got["jax"]


# ---- jit arguments in dict subclasses ------------------------------------------------------
class _FirstKeyMap(dict):
    """A dict registered with node data other than its keys (haiku's FlatMap-like)."""


mjax.tree_util.register_pytree_node(
    _FirstKeyMap, lambda m: (list(m.values()), sorted(m)[:1]),
    lambda aux, children: _FirstKeyMap(zip(["x", "y"], children)))


@pytest.mark.parametrize("make", [
    lambda: collections.defaultdict(list, {"a": np.ones(2), "b": np.ones(3)}),
    lambda: collections.OrderedDict(b=np.ones(2), a=np.ones(1)),
    lambda: _FirstKeyMap(x=np.ones(2), y=np.ones(2))])
def test_jit_takes_dict_subclasses_as_keyword_arguments(make):
    # (jit names each argument leaf by its path, as JAX's debug info does: a node's
    # data that is not its keys is no key to name a child by; it raised IndexError)
    value = make()
    out = mjax.jit(lambda x, s=None: x + sum(v.sum() for v in s.values()))(1.0, s=value)
    assert float(out) == 1.0 + sum(float(np.sum(v)) for v in value.values())
