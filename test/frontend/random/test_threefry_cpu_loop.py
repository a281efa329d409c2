"""On the CPU threefry's rounds run in a loop, as JAX's CPU rule runs them
(passes/rules/random.py, `_threefry_rolled`): the same values, and XLA's optimized program
of the same size as JAX's where random values are read many ways. Unrolled, XLA's CPU
compiler copied the twenty rounds into every fusion reading them: JAX's MNIST VAE example
(a 10x10 grid of sampled images, each a slice) took 117 s to compile against JAX's 5."""
from __future__ import annotations

import re

import jax
import numpy as np
import pytest

import mjax


def _grid(lib, n):
    """Random images made with bernoulli, tiled into an n x n grid slice by slice (the
    VAE example's image_grid)."""
    jnp = lib.numpy

    def f(key):
        k1, k2 = lib.random.split(key)
        logits = lib.random.normal(k1, (n * n, 16))
        images = iter(lib.random.bernoulli(k2, jnp.logaddexp(0., logits)).reshape(-1, 4, 4))
        return jnp.vstack([jnp.hstack([next(images).T for _ in range(n)][::-1])
                           for _ in range(n)]).T
    return f


def _counts(hlo: str) -> dict:
    return {"shift-left": len(re.findall(r"shift-left\(", hlo)),
            "while": len(re.findall(r" while\(", hlo)),
            "fusion": len(re.findall(r" fusion\(", hlo))}


@pytest.mark.parametrize("n", [2, 3])
def test_sliced_random_values_compile_as_jaxs(n):
    got = {}
    for lib in (jax, mjax):
        with lib.default_device(lib.devices("cpu")[0]):   # (the CPU's rule, on any machine)
            f = lib.jit(_grid(lib, n))
            got[lib.__name__] = (_counts(f.lower(lib.random.key(0)).compile().as_text()),
                                 np.asarray(f(lib.random.key(0))))
    (mine, mine_v), (theirs, theirs_v) = got["mjax"], got["jax"]
    assert mine == theirs
    np.testing.assert_array_equal(mine_v, theirs_v)


@pytest.mark.parametrize("make", [
    lambda lib, k: lib.random.bits(k, (5, 3)),
    lambda lib, k: lib.random.normal(k, (7,)),
    lambda lib, k: lib.random.key_data(lib.random.split(k, 3)),
    lambda lib, k: lib.random.key_data(lib.random.fold_in(k, 7)),
    lambda lib, k: lib.vmap(lambda kk: lib.random.uniform(kk, (2,)))(lib.random.split(k, 4)),
], ids=["bits", "normal", "split", "fold_in", "vmap_uniform"])
def test_lowered_for_the_cpu_as_jaxs(make):
    """The StableHLO's while loops of four rounds, as JAX's, and JAX's values."""
    texts, values = {}, {}
    for lib in (jax, mjax):
        with lib.default_device(lib.devices("cpu")[0]):
            f = lib.jit(lambda k, lib=lib: make(lib, k))
            texts[lib.__name__] = f.lower(lib.random.key(1)).as_text()
            values[lib.__name__] = np.asarray(f(lib.random.key(1)))
    mine, theirs = texts["mjax"], texts["jax"]
    assert mine.count("stablehlo.while") == theirs.count("stablehlo.while") >= 1
    assert mine.count("stablehlo.shift_left") == theirs.count("stablehlo.shift_left") == \
        4 * theirs.count("stablehlo.while")
    np.testing.assert_array_equal(values["mjax"], values["jax"])
