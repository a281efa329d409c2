"""jax.scipy.special, checked bit for bit against real jax: the deprecated lpmn and
lpmn_values (values, derivatives, normalization, shapes, dtypes, errors, the deprecation
warnings and the removed sph_harm), eagerly and under jit, in float32 and under x64."""
import warnings

import numpy as np
import pytest

import jax
import jax.scipy.special  # noqa: F401
import mjax


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    assert a.tobytes() == b.tobytes(), (a, b)


def _get(lib, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(lib.scipy.special, name)


Z8 = np.array([-1.5, -1.0, -0.7, -0.1, 0.0, 0.3, 0.99, 1.0])
Z50 = np.random.default_rng(0).uniform(-1.2, 1.2, 50)


def _lpmn_cases(lib, n, z, kind):
    if kind == "lpmn":
        return lambda z: _get(lib, "lpmn")(n, n, z)
    return lambda z: _get(lib, "lpmn_values")(n, n, z, kind == "normalized")


@pytest.mark.parametrize("kind", ["lpmn", "values", "normalized"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, 12])
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("z", [Z8, Z50], ids=["z8", "z50"])
def test_lpmn_float32(kind, n, jit, z):
    z = z.astype(np.float32)
    fj, fm = _lpmn_cases(jax, n, z, kind), _lpmn_cases(mjax, n, z, kind)
    if jit:
        fj, fm = jax.jit(fj), mjax.jit(fm)
    rj, rm = fj(z), fm(z)
    if kind == "lpmn":
        assert isinstance(rm, tuple) and len(rm) == 2
        _same(rj[0], rm[0])
        _same(rj[1], rm[1])
    else:
        _same(rj, rm)


@pytest.mark.parametrize("kind", ["lpmn", "values", "normalized"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_lpmn_x64(kind, dtype, jit):
    with jax.enable_x64(True), mjax.enable_x64(True):
        z = Z50.astype(dtype)
        fj, fm = _lpmn_cases(jax, 6, z, kind), _lpmn_cases(mjax, 6, z, kind)
        if jit:
            fj, fm = jax.jit(fj), mjax.jit(fm)
        for a, b in zip(jax.tree.leaves(fj(z)), jax.tree.leaves(fm(z))):
            _same(a, b)


def _raised(lib, call):
    with pytest.raises(Exception) as e:
        call(lib)
    return type(e.value), str(e.value)


@pytest.mark.parametrize("call", [
    lambda L: _get(L, "lpmn")(2, 3, np.zeros(3, np.float32)),
    lambda L: _get(L, "lpmn_values")(3, 2, np.zeros(3, np.float32), True),
    lambda L: _get(L, "lpmn")(2, 2, np.zeros((2, 3), np.float32)),
    lambda L: _get(L, "lpmn_values")(2, 2, np.zeros(3, np.int32), False),
    lambda L: _get(L, "lpmn")(2, 2, np.zeros(3, np.float16)),
    lambda L: _get(L, "lpmn_values")(2, 2, L.numpy.zeros(3), True),
    lambda L: _get(L, "lpmn")(2, 2, L.numpy.zeros(3, "bfloat16")),
], ids=["m<n", "m>n", "2-D", "int", "float16", "normalized-ok", "bfloat16"])
def test_lpmn_errors(call):
    try:
        expected = _raised(jax, call)
    except pytest.fail.Exception:  # JAX accepts it: so must mjax, with the same values
        for a, b in zip(jax.tree.leaves(call(jax)), jax.tree.leaves(call(mjax))):
            _same(a, b)
        return
    assert _raised(mjax, call) == expected


def test_lpmn_traced_degree_is_an_error():
    z = np.zeros(3, np.float32)
    with pytest.raises(Exception):
        jax.jit(lambda n: _get(jax, "lpmn")(n, n, z))(2)
    with pytest.raises(Exception):
        mjax.jit(lambda n: _get(mjax, "lpmn")(n, n, z))(2)


@pytest.mark.parametrize("name", ["lpmn", "lpmn_values"])
def test_deprecation_warnings(name):
    # (each module warns once per name, from a cached __getattr__, which other tests
    # may have called already)
    jax.scipy.special.__getattr__.cache_clear()
    mjax.scipy.special.__getattr__.cache_clear()
    with pytest.warns(DeprecationWarning) as wj:
        getattr(jax.scipy.special, name)
    msg = str(wj[0].message)
    with pytest.warns(DeprecationWarning) as wm:
        getattr(mjax.scipy.special, name)
    assert str(wm[0].message) == msg


def test_removed_sph_harm_and_unknown_names():
    for name in ("sph_harm", "no_such_function"):
        with pytest.raises(AttributeError) as ej:
            getattr(jax.scipy.special, name)
        with pytest.raises(AttributeError) as em:
            getattr(mjax.scipy.special, name)
        # (the module's own name is in the unknown-name message)
        assert str(em.value) == str(ej.value).replace("'jax.", "'mjax.", 1)
