"""jax.experimental.random's stateful generator: the same draws as JAX's, eagerly, under
jit and vmap, with split and spawn children."""
import subprocess
import sys

import jax
import jax.experimental.random  # noqa: F401
import numpy as np
import pytest

import mjax
import mjax.experimental.random as mrandom


def _draws(lib, rnd):
    rng = rnd.stateful_rng(42)
    out = [rng.random(), rng.random((3,)), rng.uniform(2.0, 5.0, 4),
           rng.uniform(lib.numpy.zeros(2), lib.numpy.ones((3, 1))),
           rng.normal(1.0, 2.0, (2, 2)), rng.integers(10, size=5),
           rng.integers(-3, 3, (2,), dtype="int32"), lib.random.key_data(rng.key()),
           lib.random.key_data(rng.key((2,)))]
    jit_uniform = lib.jit(rng.uniform)
    out += [jit_uniform(), jit_uniform()]
    f = lambda x, r: x + r.uniform()  # noqa: E731
    out.append(lib.vmap(f)(lib.numpy.arange(5.0), rng.split(5)))
    out += [c.normal() for c in rng.spawn(3)]
    other = rnd.stateful_rng(7, impl="rbg")
    out += [other.random(2), other.random(2)]
    return out


def test_draws_as_jax():
    got, want = _draws(mjax, mrandom), _draws(jax, jax.experimental.random)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_draws_inside_jit_advance_the_counter():
    rng = mrandom.stateful_rng(0)
    f = mjax.jit(lambda: rng.normal(size=(2,)))
    a, b = f(), f()
    assert not np.array_equal(np.asarray(a), np.asarray(b))
    jrng = jax.experimental.random.stateful_rng(0)
    jf = jax.jit(lambda: jrng.normal(size=(2,)))
    np.testing.assert_allclose(np.asarray(a), np.asarray(jf()), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(b), np.asarray(jf()), rtol=1e-6)


def test_errors():
    with pytest.raises(TypeError, match="requires an explicit seed"):
        mjax.jit(lambda x: mrandom.stateful_rng().random() + x)(1.0)
    with pytest.raises(ValueError, match="cannot operate on split stateful generator"):
        mrandom.stateful_rng(0).split(3).random()
    with pytest.raises(ValueError, match="typed PRNG key"):
        mrandom.StatefulPRNG(mjax.random.PRNGKey(0), mjax.new_ref(0))
    with pytest.raises(ValueError, match="integer ref"):
        mrandom.StatefulPRNG(mjax.random.key(0), 0)
    assert mrandom.stateful_rng().random().shape == ()     # (seeded from NumPy's entropy)


def test_without_jax_in_the_process():
    code = ("import sys, numpy as np, mjax\n"
            "from mjax.experimental import random\n"
            "rng = random.stateful_rng(1701)\n"
            "a, b = rng.random((5,)), rng.random((5,))\n"
            "assert not np.array_equal(np.asarray(a), np.asarray(b))\n"
            "assert random.stateful_rng(1701).random((5,)).tolist() == a.tolist()\n"
            "assert 'jax' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)
