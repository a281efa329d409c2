"""Public JAX behaviour flax.nnx builds on: objects with `__jax_array__` as operands under
a trace, literals as jax.Arrays, prefixes with childless nodes, jax.experimental.hijax's
names, the Python-side pytree registry, lax.dtype of dtypes, einsum's `_dot_general`,
mesh axis-type queries, mesh_utils and multihost_utils, eager placement by a sharding over
the abstract mesh."""
from __future__ import annotations

import dataclasses
import functools

import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import tree_util


class Boxed:
    """Holds an array and converts to it (as flax's Variable and equinox's wrappers do);
    forwards attribute reads to it, so it even has an `aval`."""

    def __init__(self, value):
        self.value = value

    def __jax_array__(self):
        return self.value

    def __getattr__(self, name):
        return getattr(self.__dict__["value"], name)


def test_jax_array_operand_of_a_traced_op_is_its_array():
    # (staged as a constant, the box would freeze the tracer it holds: a wrong program)
    f = mjax.jit(lambda x, w: x @ Boxed(w))
    np.testing.assert_allclose(f(jnp.ones(2), jnp.full((2, 3), 2.0)), np.full(3, 4.0))
    g = mjax.vmap(lambda w: jnp.ones(2) @ Boxed(w))
    np.testing.assert_allclose(g(jnp.ones((4, 2, 3))), np.full((4, 3), 2.0))
    assert float(mjax.grad(lambda w: (Boxed(w) * w).sum())(jnp.float32(3.0))) == 6.0


def test_a_literal_is_a_jax_array():
    seen = []
    mjax.jit(lambda x: seen.append(isinstance(jnp.zeros((), jnp.uint32), mjax.Array)) or x)(1.0)
    assert seen == [True]


@tree_util.register_pytree_node_class
class Empty:
    def tree_flatten(self):
        return (), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls()


@tree_util.register_dataclass
@dataclasses.dataclass
class Model:
    state: Empty
    w: object


def test_vmap_prefix_with_a_node_without_children():
    m = Model(Empty(), jnp.ones((4, 3)))
    out = mjax.vmap(lambda m: m.w.sum(), in_axes=(Model(Empty(), 0),))(m)
    np.testing.assert_allclose(out, np.full(4, 3.0))


def test_registry_dict_lists_registered_types():
    from mjax._src.tree_util import _registry
    assert Empty in _registry and Model in _registry and list in _registry
    children, aux = _registry[Model].to_iter(Model(Empty(), 2.0))
    assert _registry[Model].from_iter(aux, children).w == 2.0


def test_hijax_names_import_and_binding_says_what_is_missing():
    from mjax.experimental import hijax as hjx

    class P(hjx.HiPrimitive):
        pass

    class T(hjx.MutableHiType):
        get = hjx.aval_method(lambda self: 7)

    hjx.register_hitype(Boxed, lambda b: T())
    hjx.control_flow_allowed_effects.add_type(type("E", (), {}))
    assert T().get() == 7
    with pytest.raises(NotImplementedError, match="hijax"):
        P("p").bind(1.0)


@pytest.mark.parametrize("value", [np.dtype("int32"), np.float64, "float32", int, float,
                                   bool, np.ones(2), 3.0])
def test_lax_dtype_as_jax(value):
    assert mjax.lax.dtype(value) == jax.lax.dtype(value)


def test_einsum_takes_jax_private_dot_general():
    calls = []

    def dot_general(*args, **kwargs):
        calls.append(1)
        return mjax.lax.dot_general(*args, **kwargs)

    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out = jnp.einsum("ij,kj->ik", x, x, _dot_general=dot_general)
    np.testing.assert_allclose(out, x @ x.T)
    assert calls == [1]


def test_mesh_axis_type_queries_as_jax():
    for mod in (mjax, jax):
        T = mod.sharding.AxisType
        m = mod.make_mesh((1, 1), ("a", "b"), axis_types=(T.Explicit, T.Auto))
        got = (m.are_all_axes_explicit, m.are_all_axes_auto, m.are_all_axes_manual,
               m.explicit_axes, m.auto_axes, m.manual_axes,
               m.abstract_mesh.are_all_axes_explicit, m.abstract_mesh.auto_axes)
        assert got == (False, False, False, ("a",), ("b",), (), False, ("b",)), mod


def test_mesh_utils_and_multihost_utils_on_one_process():
    from mjax.experimental import mesh_utils, multihost_utils
    devs = mjax.devices()
    arr = mesh_utils.create_device_mesh((len(devs),))
    assert arr.shape == (len(devs),) and list(arr) == devs
    with pytest.raises(ValueError, match="must equal the product"):
        mesh_utils.create_device_mesh((len(devs) + 1,))
    got = multihost_utils.process_allgather({"a": jnp.arange(3)})
    np.testing.assert_array_equal(got["a"], [[0, 1, 2]])
    np.testing.assert_array_equal(multihost_utils.process_allgather(jnp.arange(3), tiled=True),
                                  [0, 1, 2])
    assert multihost_utils.reached_preemption_sync_point(1) is False
    multihost_utils.sync_global_devices("here")


def test_device_put_by_a_sharding_over_the_abstract_mesh():
    P = mjax.sharding.PartitionSpec
    mesh = mjax.make_mesh((1,), ("x",), axis_types=(mjax.sharding.AxisType.Auto,))
    with mjax.set_mesh(mesh):
        s = mjax.sharding.NamedSharding(mjax.sharding.get_abstract_mesh(), P("x"))
        y = mjax.lax.with_sharding_constraint(jnp.arange(4.0), s)
    assert y.sharding.mesh == mesh
    with pytest.raises(ValueError, match="concrete mesh"):
        mjax.device_put(jnp.arange(4.0), s)


def test_cond_returns_a_passed_through_operand_itself():
    # (flax.nnx's cond under vmap: an unbatched value every branch returns unchanged stays
    # unbatched, so out_axes=None accepts it, as in JAX)
    def f(p, x, y):
        return mjax.lax.cond(p, lambda x, y: (x, y + 1), lambda x, y: (x, y * 2), x, y)

    x = jnp.arange(3.0)
    out = mjax.vmap(f, in_axes=(0, None, 0), out_axes=(None, 0))(
        jnp.array([True, False]), x, jnp.ones(2))
    np.testing.assert_array_equal(out[0], x)
    np.testing.assert_array_equal(out[1], [2.0, 2.0])
    want = jax.vmap(lambda p, y: jax.lax.cond(p, lambda x, y: (x, y + 1),
                                              lambda x, y: (x, y * 2), np.arange(3.0), y),
                    in_axes=(0, 0), out_axes=(None, 0))(np.array([True, False]), np.ones(2))
    np.testing.assert_array_equal(out[1], want[1])


def test_eager_loops_trace_their_body_once():
    traced = []

    def body(c, x):
        traced.append(1)
        return c + 1, x * 2

    for _ in range(3):
        c, ys = mjax.lax.scan(body, jnp.int32(0), jnp.arange(4))
    assert len(traced) == 1 and int(c) == 4
    np.testing.assert_array_equal(ys, [0, 2, 4, 6])

    def step(i, v):
        traced.append(2)
        return v + i

    assert [int(mjax.lax.fori_loop(0, 4, step, 0)) for _ in range(3)] == [6, 6, 6]
    assert [int(mjax.lax.fori_loop(0, jnp.int32(3), step, 0)) for _ in range(3)] == [3] * 3
    # (both are scans of the same body with the same types: traced once, as JAX does)
    assert traced.count(2) == 1


def test_mapping_over_a_key_gives_what_the_function_returns():
    k = mjax.random.key(0)
    assert mjax.tree.map(lambda x: None, k) is None
    assert mjax.tree.map(lambda x: 0, {"k": k}) == {"k": 0}
    assert type(k) not in tree_util.NODE_TYPES     # (JAX's keys are leaves)


def test_refs_through_a_jit_with_shardings():
    # (compiled for a mesh: the refs' final values come back as extra results; this used
    # to write result attributes for results the program did not have, a segfault)
    mesh = mjax.make_mesh((1,), ("x",))
    s = mjax.sharding.NamedSharding(mesh, mjax.sharding.PartitionSpec())
    r = mjax.new_ref(np.zeros(3, np.float32))
    c = mjax.new_ref(np.float32(1))

    def body(r, x):
        r[...] += x
        c[...] += 1
        return x * 2

    f = mjax.jit(body, in_shardings=(None, s), out_shardings=s)
    for step in (1, 2):
        np.testing.assert_array_equal(f(r, jnp.arange(3.0)), [0, 2, 4])
        np.testing.assert_array_equal(r[...], np.arange(3.0) * step)
        assert float(c[...]) == 1 + step


def test_lowered_cost_analysis_as_jax():
    f = lambda x: (x @ x).sum()     # noqa: E731
    ours = mjax.jit(f).lower(jnp.ones((8, 8))).cost_analysis()
    theirs = jax.jit(f).lower(jax.numpy.ones((8, 8))).cost_analysis()
    if theirs is None:      # (a TPU: PJRT's C API has no cost analysis before compiling)
        assert ours is None and jax.default_backend() != "cpu"
        return
    assert ours["flops"] == theirs["flops"] > 0


def test_aval_sharding_and_avals_built_with_jax_keywords():
    # (flax's linen scan: `x.aval.sharding`, then core.ShapedArray(..., sharding=...))
    for mod in (mjax, jax):
        s = mod.numpy.ones((2, 3)).aval.sharding
        assert (s.spec, s.mesh.axis_names) == (mod.sharding.PartitionSpec(None, None), ())
        s1 = s.update(spec=mod.sharding.PartitionSpec(None))
        assert s1.spec == mod.sharding.PartitionSpec(None) and s1.mesh == s.mesh
        a = mod.core.ShapedArray((3,), np.float32, sharding=s1, weak_type=True)
        assert a.shape == (3,) and a.weak_type
    with pytest.raises(TypeError, match="weak_typ"):
        mjax.core.ShapedArray((3,), np.float32, weak_typ=True)


def test_shard_map_results_carry_their_out_specs():
    for mod in (mjax, jax):
        P = mod.sharding.PartitionSpec
        mesh = mod.make_mesh((2,), ("model",), axis_types=(mod.sharding.AxisType.Auto,))
        total = mod.shard_map(lambda x: mod.lax.psum(x, "model"), mesh=mesh,
                              in_specs=P("model"), out_specs=P(None))
        twice = mod.shard_map(lambda x: x * 2, mesh=mesh, in_specs=P("model"),
                              out_specs=P("model"))
        x = mod.numpy.arange(8.0)
        assert total(x).sharding.spec == P(None), mod
        assert twice(x).sharding.spec == P("model"), mod
        np.testing.assert_array_equal(total(x), [4, 6, 8, 10])


def test_trace_to_jaxpr_nounits_splits_known_from_unknown():
    # (flax's linen scan: its broadcast variables must be known before the loop)
    from jax.extend import linear_util as jlu
    from jax.interpreters import partial_eval as jpe
    from mjax.extend import linear_util as lu
    from mjax.interpreters import partial_eval as pe

    def run(mod, lu, pe):
        c = mod.numpy.arange(3.0)

        def f(x, y):
            return x + 1, mod.numpy.sin(c) * 2, y * x, c

        fun = lu.wrap_init(f, debug_info=jax.api_util.debug_info("f", f, (1, 2), {})) \
            if mod is jax else lu.wrap_init(f)
        return pe.trace_to_jaxpr_nounits(fun, [
            pe.PartialVal.unknown(mod.core.ShapedArray((3,), np.float32)),
            pe.PartialVal.known(np.float32(2))])

    jaxpr, outs, consts = run(mjax, lu, pe)
    _, want, _ = run(jax, jlu, jpe)
    assert [o.is_known() for o in outs] == [o.is_known() for o in want] == \
        [False, True, False, True]
    for o, w in zip(outs, want):
        if o.is_known():
            np.testing.assert_allclose(o.get_known(), w.get_known(), rtol=1e-6)
    got = mjax.core.eval_jaxpr(jaxpr, consts, jnp.ones(3))
    np.testing.assert_allclose(got, [[2, 2, 2], [2, 2, 2]])


def test_eval_jaxpr_of_key_operations_eagerly():
    k = mjax.random.key(1)
    closed = mjax.make_jaxpr(lambda x: (mjax.random.normal(k, (3,)), x + 1))(1.0)
    got = mjax.core.eval_jaxpr(closed.jaxpr, closed.consts, 1.0)
    np.testing.assert_allclose(got[0], jax.random.normal(jax.random.key(1), (3,)), rtol=1e-6)
    assert float(got[1]) == 2.0


def test_static_argnums_and_argnames_given_together_are_not_inferred():
    # (flax's linen jit passes both: a keyword-only static name reached through **kwargs)
    seen = []

    @functools.wraps(lambda scope, a, b: None)
    def fn(fingerprint, groups, *args, **kwargs):
        seen.append(kwargs["b"])
        return args[0] * 2

    f = mjax.jit(fn, static_argnums=(0,), static_argnames=("b",))
    assert float(f(("fp",), ({},), jnp.float32(1.5), b="hi")) == 3.0 and seen == ["hi"]
    assert (f.static_argnums, f.static_argnames) == ((0,), ("b",))
    g = mjax.jit(lambda a, b, *args, c=1: a, static_argnames="b")
    assert (g.static_argnums, g.static_argnames) == ((1,), ("b",))
