"""Where a jit runs under a mesh context, compared with jax: set_mesh makes calls compile
for its mesh (whatever in_shardings of Nones say), the deprecated `with mesh:` only names
the mesh of bare PartitionSpecs, and arguments committed to other devices raise JAX's
ValueError with its words."""
import re
import warnings

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp

LIBS = {"jax": (jax, jjnp), "mjax": (mjax, jnp)}
FUNCTIONS = {
    "plain": lambda J: (lambda x: x * 2),
    "constraint": lambda J: (lambda x: J.lax.with_sharding_constraint(
        x, J.sharding.PartitionSpec("in"))),
}
JIT_OPTIONS = {"none": {}, "in_nones": {"in_shardings": (None,)},
               "out_none": {"out_shardings": None}}


def _run(J, np_, context, fn, options, committed):
    mesh = J.make_mesh((2, 2), ("in", "out"),
                       axis_types=(J.sharding.AxisType.Auto,) * 2)
    x = np_.arange(16.0).reshape(4, 4)
    if committed:
        x = J.device_put(x, J.devices()[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with (J.set_mesh(mesh) if context == "set_mesh" else mesh):
            y = J.jit(FUNCTIONS[fn](J), **JIT_OPTIONS[options])(x)
    s = y.sharding
    placed = (type(s).__name__, tuple(getattr(s, "spec", ())),
              sorted(d.id for d in s.device_set), y.committed)
    return placed, np.asarray(y)


def _outcome(*args):
    try:
        return _run(*args)
    except ValueError as e:
        # (mjax's messages may end by naming the user's line)
        text = re.sub(r" at \S+:\d+:\d+ \(<lambda>\)", "", str(e))
        return "ValueError", re.sub(r"/\S+", "FILE", text)


@pytest.mark.parametrize("context", ["set_mesh", "with_mesh"])
@pytest.mark.parametrize("fn", sorted(FUNCTIONS))
@pytest.mark.parametrize("options", sorted(JIT_OPTIONS))
@pytest.mark.parametrize("committed", [False, True])
def test_jit_under_mesh_context_as_jax(context, fn, options, committed):
    got = {name: _outcome(*libs, context, fn, options, committed)
           for name, libs in LIBS.items()}
    if got["jax"][0] == "ValueError":
        assert got["mjax"] == got["jax"]
        return
    assert got["mjax"][0] == got["jax"][0]
    np.testing.assert_array_equal(got["mjax"][1], got["jax"][1])


def test_mesh_context_manager_is_deprecated_as_in_jax():
    for J in (jax, mjax):
        mesh = J.make_mesh((2,), ("x",))
        with pytest.warns(DeprecationWarning, match="set_mesh"):
            with mesh:
                pass
        with _disallowed(J):
            with pytest.raises(RuntimeError, match="Mesh context manager is disabled"):
                with mesh:
                    pass


class _disallowed:
    def __init__(self, J):
        self.J = J

    def __enter__(self):
        self.J.config.update("jax_disallow_mesh_context_manager", True)

    def __exit__(self, *exc):
        self.J.config.update("jax_disallow_mesh_context_manager", False)


@pytest.mark.parametrize("value,spec", [((4,), ("x", None, None)), ((), (None,)),
                                        ((4, 2), ("x", None, None)), ((4, 2), ("x", None))])
@pytest.mark.parametrize("where", ["device_put", "jit"])
def test_spec_longer_than_rank_as_jax(value, spec, where):
    # A spec with more entries than the value has dimensions is JAX's ValueError (spec
    # entries past the rank are refused even when they are None), naming the argument.
    got = {}
    for name, (J, np_) in LIBS.items():
        s = J.sharding.NamedSharding(J.make_mesh((2,), ("x",)), J.sharding.PartitionSpec(*spec))
        x = np.ones(value, np.float32)

        def put(a):
            return J.device_put(a, s) if where == "device_put" else J.jit(
                lambda a: a, in_shardings=s)(a)
        try:
            got[name] = ("ok", put(x).sharding.shard_shape(value))
        except ValueError as e:
            got[name] = ("ValueError", str(e).replace("jax.", ""))
    assert got["mjax"] == got["jax"]
