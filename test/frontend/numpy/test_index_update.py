"""x.at[idx] updates: values, dtypes and weak types as JAX's for every kind of index, and
the scatter JAX emits (into x itself, no flattening, JAX's dimension numbers)."""
import warnings

import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp

X3 = np.arange(24).reshape(2, 3, 4)
_I = np.array
INDICES = [
    1, -1, np.int32(2), np.int64(-2), np.uint8(1), (0, 1), (0, 1, 2), (-1, -1, -1),
    slice(None), slice(1, None), (slice(None), 1), (Ellipsis, 2), (None, 1), (1, None),
    (None, 1, Ellipsis, None, 2), (slice(None), slice(None, None, -1)),
    (slice(None), slice(2, 0, -1), slice(None, None, 3)), (slice(None), slice(5, 9)),
    (0, slice(None, None, 2), -1), _I([1, 0]), _I([-1, 0, 1]), _I([[0], [1]]),
    (_I([1, 0]), _I([2, 0])), (_I([[1], [0]]), _I([2, 0, 1])), (slice(None), _I([0, 2])),
    (slice(None), _I([0, 2]), slice(None, None, -2)), (_I([1, 0]), slice(None), _I([3, 0])),
    (_I([1, 0]), 1, _I([3, 0])), (0, _I([2, 2, 0])), (None, _I([1]), Ellipsis, _I([0, 3])),
    (_I([True, False]),), (1, _I([True, False, True])), (_I([5, -7, 1]),), (1, _I([4, 2])),
    (Ellipsis, _I([], np.int32)), True, (0, False), (Ellipsis, np.int32(7)),
]


def _both(fn):
    got, want = fn(jnp, mjax), fn(jax.numpy, jax)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.weak_type == want.weak_type
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("k", range(len(INDICES)))
@pytest.mark.parametrize("kind", ["set", "add", "multiply", "min", "max", "subtract"])
def test_update_matches_jax(k, kind):
    idx = INDICES[k]

    def run(np_, lib):
        x = np_.asarray(X3)
        return lib.jit(lambda x: getattr(x.at[idx], kind)(np_.asarray(-5)))(x)
    _both(run)
    # (eagerly too, with a scalar and with an array of the selected shape)
    sel = np.asarray(jax.numpy.asarray(X3)[idx])
    _both(lambda np_, lib: getattr(np_.asarray(X3).at[idx], kind)(
        np_.asarray(np.arange(sel.size).reshape(sel.shape) + 100)))


@pytest.mark.parametrize("kind", ["set", "add", "multiply", "divide", "power"])
def test_update_dtypes_as_jax(kind):
    """The update runs in the promoted dtype and is cast back (an int x multiplied by 0.5
    truncates the product, not the 0.5), with JAX's FutureWarning for the unsafe cast."""
    for x, v in [([3, 4, 5], 0.5), ([3, 4, 5], 2), ([1.5, 2.5, 0.25], 3),
                 ([True, False, True], 1), ([1, 2, 3], 2.7)]:
        def run(np_, lib):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return getattr(np_.asarray(x).at[np_.asarray([0, 0, 2])], kind)(v)
        _both(run)
    with pytest.warns(FutureWarning, match="scatter inputs have incompatible types"):
        jnp.asarray([3, 4]).at[0].multiply(0.5)


@pytest.mark.parametrize("kind", ["set", "add", "multiply", "min", "max"])
def test_general_path_dtypes_as_jax(kind):
    """Indices the scatter plan leaves to the flat path (scalar boolean masks, clipped
    positions, jax.ds windows) also update in the promoted dtype and cast back."""
    for idx, mode in [(True, None), ((1, 7), "clip"), (np.array([0, 9]), "clip"),
                      (np.array(True), None)]:
        def run(np_, lib):
            x = np_.arange(12).reshape(3, 4)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return getattr(x.at[idx], kind)(1.7, mode=mode)
        _both(run)

    def window(np_, lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.jit(lambda x, i: getattr(x.at[lib.numpy.s_[lib.ds(i, 2)]], kind)(
                0.5))(np_.arange(6), 1)
    _both(window)


def test_weakly_typed_x_stays_weak():
    _both(lambda np_, lib: lib.jit(lambda: np_.asarray(2.0).at[()].set(1.0))())
    _both(lambda np_, lib: lib.jit(lambda x: (x * 1.0).at[1].add(2))(np_.arange(3.0)))


@pytest.mark.parametrize("mode", [None, "drop", "fill", "clip", "promise_in_bounds"])
def test_modes(mode):
    idx = np.array([-1, 7, 2]) if mode != "promise_in_bounds" else np.array([-1, 2])
    _both(lambda np_, lib: np_.arange(5).at[idx].set(-9, mode=mode))
    _both(lambda np_, lib: np_.arange(5.).at[idx].apply(lambda v: v * 3, mode=mode))


def test_apply_and_repeated_indices():
    _both(lambda np_, lib: np_.arange(5.).at[1:4].apply(np_.sin))
    _both(lambda np_, lib: np_.arange(5.).at[np_.array([1, 1, 3])].apply(lambda v: v * 2))
    _both(lambda np_, lib: np_.zeros((3, 4)).at[np_.array([0, 0, 2]), 1:3].add(1.0))


def test_traced_indices_and_transformations():
    _both(lambda np_, lib: lib.jit(lambda x, i: x.at[i, :, i].set(0))(np_.asarray(X3), -1))
    _both(lambda np_, lib: lib.vmap(lambda x, i: x.at[i].set(0.))(
        np_.ones((3, 4)), np_.array([0, 2, -1])))
    _both(lambda np_, lib: lib.grad(lambda x: np_.sum(
        x.at[np_.array([0, 0, 2])].multiply(3.0) ** 2))(np_.arange(1., 4.)))
    for k in (0, 1):
        _both(lambda np_, lib: lib.grad(lambda x, v: np_.sum(x.at[::2].set(v) ** 2),
                                        argnums=k)(np_.arange(1., 6.), np_.ones(3)))

    def loop(np_, lib):
        def body(i, x):
            return x.at[i].set(x[i - 1] * 2.0 + 1.0)
        return lib.jit(lambda x: lib.lax.fori_loop(1, 6, body, x))(np_.zeros((6, 2)))
    _both(loop)


def test_scatter_writes_into_x_itself():
    """No flat positions: one scatter into x with JAX's dimension numbers, the update
    window a whole row."""
    x = jnp.zeros((40, 8))
    text = mjax.jit(lambda x, i, r: x.at[i].set(r)).lower(x, 3, jnp.ones(8)).as_text()
    assert "iota" not in text and text.count("\"stablehlo.scatter\"(") == 1
    assert "tensor<40x8xf32>, tensor<1xi32>, tensor<8xf32>" in text
    jaxpr = mjax.make_jaxpr(lambda x: x.at[:, 1].multiply(2.0))(x)
    (eqn,) = [e for e in jaxpr.eqns if e.primitive.name == "scatter-mul"]
    assert eqn.invars[0].aval.shape == (40, 8)
    assert eqn.params["indices_are_sorted"] and eqn.params["unique_indices"]


STATIC = [(slice(None, None, 2), slice(1, 3)), (slice(None, None, -1),), (slice(3, 0, -2), 1),
          (None, 1, None, slice(2, 4)), (Ellipsis, None), (1, Ellipsis, slice(None, None, -3)),
          (slice(5, 1),), (-1, -1, -1), (slice(-100, 100),), (slice(0, 3, -1),)]


@pytest.mark.parametrize("k", range(len(STATIC)))
def test_static_indexing_jaxpr_as_jax(k):
    """A static basic index stages as JAX's: one slice (negative steps forward, then rev),
    squeeze, then the new axes."""
    idx = STATIC[k]
    m = np.ones((4, 5, 6), np.float32)
    got = str(mjax.make_jaxpr(lambda m: m[idx])(m))
    assert got == str(jax.make_jaxpr(lambda m: m[idx])(m))
    np.testing.assert_array_equal(mjax.jit(lambda m: m[idx])(np.arange(120.).reshape(4, 5, 6)),
                                  np.arange(120.).reshape(4, 5, 6)[idx])


def test_update_jaxpr_as_jax():
    """The scatter's operands and dimension numbers are JAX's (the printed parameters
    are compared in test_jaxpr_print)."""
    for fn in [lambda m: m.at[1].set(2.), lambda m: m.at[:, 1].mul(2.),
               lambda m: m.at[np.array([0, 2]), 1:3].add(1.)]:
        m = np.ones((4, 5), np.float32)
        mine = [e for e in mjax.make_jaxpr(fn)(m).eqns if e.primitive.name.startswith("scatter")]
        theirs = [e for e in jax.make_jaxpr(fn)(m).eqns
                  if e.primitive.name.startswith("scatter")]
        assert len(mine) == len(theirs) == 1
        assert [v.aval.shape for v in mine[0].invars] == [v.aval.shape for v in theirs[0].invars]
        dn = mine[0].params["dimension_numbers"]
        dn = dn if isinstance(dn, dict) else dn._asdict()
        assert dn == theirs[0].params["dimension_numbers"]._asdict()
