"""out_sharding= where JAX's training code passes it (initializers, x.at[i].get), and Ref
arguments keeping their layout through a jit, under Explicit mesh axes: values, types
and shardings compared with jax."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp

LIBS = {"jax": (jax, jjnp), "mjax": (mjax, jnp)}


def _mesh(J):
    return J.make_mesh((4,), ("x",), axis_types=(J.sharding.AxisType.Explicit,))


INITIALIZERS = {
    "zeros": lambda J: J.nn.initializers.zeros,
    "ones": lambda J: J.nn.initializers.ones,
    "constant": lambda J: J.nn.initializers.constant(0.5),
    "normal": lambda J: J.nn.initializers.normal(0.1),
    "uniform": lambda J: J.nn.initializers.uniform(0.1),
    "truncated_normal": lambda J: J.nn.initializers.truncated_normal(0.1),
    "he_normal": lambda J: J.nn.initializers.he_normal(),
    "glorot_uniform": lambda J: J.nn.initializers.glorot_uniform(),
    "lecun_normal": lambda J: J.nn.initializers.lecun_normal(),
    "orthogonal": lambda J: J.nn.initializers.orthogonal(),
}


@pytest.mark.parametrize("name", sorted(INITIALIZERS))
@pytest.mark.parametrize("jitted", [False, True])
def test_initializer_out_sharding_as_jax(name, jitted):
    got = {}
    for lib, (J, _) in LIBS.items():
        init = INITIALIZERS[name](J)

        def make(key):
            # (out_sharding given positionally, as JAX's Training Cookbook does)
            return init(key, (8, 4), "float32", J.P("x", None))
        with J.set_mesh(_mesh(J)):
            if name == "orthogonal":    # (JAX's refuses out_sharding)
                with pytest.raises(NotImplementedError):
                    (J.jit(make) if jitted else make)(J.random.key(3))
                continue
            out = (J.jit(make) if jitted else make)(J.random.key(3))
            got[lib] = (str(J.typeof(out)), np.asarray(out))
    if name == "orthogonal":
        return
    assert got["mjax"][0] == got["jax"][0]          # float32[8@x,4]
    np.testing.assert_allclose(got["mjax"][1], got["jax"][1], rtol=1e-6, atol=1e-7)


def test_gather_out_sharding_as_jax():
    got = {}
    for lib, (J, np_) in LIBS.items():
        with J.set_mesh(_mesh(J)):
            table = J.device_put(np_.arange(24.0).reshape(6, 4), J.P())
            ids = J.device_put(np_.array([[0, 5], [1, 1], [2, 3], [4, 0]]), J.P("x"))

            @J.jit
            def lookup(table, ids):
                return table.at[ids].get(out_sharding=J.P("x", None, None))
            out = lookup(table, ids)
            got[lib] = (str(J.typeof(out)), np.asarray(out))
    assert got["mjax"][0] == got["jax"][0]          # float32[4@x,2,4]
    np.testing.assert_array_equal(got["mjax"][1], got["jax"][1])


def test_ref_argument_keeps_its_layout_through_jit():
    got = {}
    for lib, (J, np_) in LIBS.items():
        with J.set_mesh(_mesh(J)):
            ref = J.new_ref(J.device_put(np_.arange(8.0).reshape(8, 1), J.P("x")))

            @J.jit
            def step(r, g):
                r[...] -= 0.5 * g
            step(ref, np_.ones((8, 1)))
            step(ref, np_.ones((8, 1)))
            value = J.ref.get(ref)
            got[lib] = (str(J.typeof(value)), str(value.sharding.spec), np.asarray(value))
    assert got["mjax"][:2] == got["jax"][:2]        # float32[8@x,1], P('x', None)
    np.testing.assert_array_equal(got["mjax"][2], got["jax"][2])


def test_typeof_of_a_ref_over_a_mesh_as_jax():
    got = {}
    for lib, (J, np_) in LIBS.items():
        with J.set_mesh(_mesh(J)):
            ref = J.new_ref(J.device_put(np_.zeros((8, 2)), J.P("x")))
            plain = J.new_ref(np_.zeros(3))
            got[lib] = (str(J.typeof(ref)), str(J.typeof(plain)),
                        str(J.typeof(ref).sharding.spec))
    assert got["mjax"] == got["jax"]      # Ref{float32[8@x,2]}, Ref{float32[3]}
