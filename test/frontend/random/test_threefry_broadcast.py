"""The threefry2x32 primitive broadcasts its operands as JAX's threefry2x32_p does
(lax.broadcasting_shape_rule): scalars to any shape, the other operands of one rank with
equal dimensions or 1s; JAX's TypeErrors otherwise. Reached publicly through
jax.extend.random.threefry2x32_p (also jax.extend.core.primitives) and
jax.extend.random.threefry_2x32, whose key words are arrays when the keypair is one.
Checked against jax: the printed jaxprs (bound directly, through threefry_2x32, under
vmap: JAX's broadcast_batcher), the errors, and the values eagerly, under jit and vmap.

JAX's CPU rule runs the rounds in a fori_loop whose carry refuses key words of two
shapes, or counters that broadcast further within the rounds (a TypeError when lowered
for the CPU, vmap over one key word included), while its TPU and GPU rules, unrolled,
take every shape its shape rule takes: mjax computes those everywhere, checked against
JAX's unrolled rule and against JAX on the operands broadcast beforehand.
"""
from __future__ import annotations

import re

import jax
import jax.extend.random as jrandom
import numpy as np
import pytest

import mjax
import mjax.extend.core.primitives as mprimitives
import mjax.extend.random as mrandom

JP, MP = jrandom.threefry2x32_p, mrandom.threefry2x32_p


def _u32(shape, seed=0):
    rng = np.random.default_rng(seed + len(shape) * 7 + sum(shape))
    return rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.uint32)


def _printed(make_jaxpr, f, *args):
    """The printed jaxpr, JAX's np.int64(1) as 1 and parameters on one line (JAX wraps
    the brackets of a long one)."""
    text = re.sub(r"np\.int64\((-?\d+)\)", r"\1", str(make_jaxpr(f)(*args)))
    text = re.sub(r"\[\s+", "[", re.sub(r"\s+\]", "]", text))
    return re.sub(r"\s+", " ", text)


def _bind(p):
    return lambda k1, k2, x1, x2: p.bind(k1, k2, x1, x2)


def _jax_unrolled(*args):
    """JAX's TPU and GPU rule (the rounds unrolled), run here as a jnp function."""
    from jax._src.random import threefry2x32 as jax_threefry
    return jax_threefry._threefry2x32_lowering(*(jax.numpy.asarray(a) for a in args),
                                               use_rolled_loops=False)


def _jax_cpu_takes(k1, k2, x1, x2) -> bool:
    """Whether JAX's rule for its default platform takes these shapes: on a TPU (or GPU)
    every shape, on the CPU those its fori_loop's carry takes."""
    if jax.default_backend() != "cpu":
        return True

    def bc(*shapes):
        shapes = [s for s in shapes if s]
        return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
    return k1 == k2 and bc(x1, k1) == bc(x2, k2)


def _same(got, want):
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype == np.uint32 and g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_array_equal(g, w)


def test_public_names_are_jaxs():
    assert MP is mprimitives.threefry2x32_p is mjax.lax.threefry2x32_p
    assert str(MP) == str(JP) == "threefry2x32" and MP.multiple_results
    names = lambda m: sorted(n for n in m.__all__) if hasattr(m, "__all__") else None
    assert "threefry2x32_p" in names(mrandom)
    assert set(n for n in dir(jrandom) if not n.startswith("_")) <= set(dir(mrandom))


# ---- the shape rule -----------------------------------------------------------------------
_SHAPES = [
    ((1, 4), (3, 1), (3, 4), (1, 1)),        # (1s both ways)
    ((), (3,), (1,), (3,)),                  # (a scalar among them)
    ((), (), (5,), (5,)),                    # (threefry_2x32's scalar key words)
    ((3, 1), (3, 1), (1, 4), (3, 4)),
    ((1,), (), (), ()),
    ((), (), (), ()),
    ((0,), (1,), (1,), (1,)),                # (an empty dimension)
    ((2, 1, 3), (1, 4, 1), (1, 1, 1), (2, 4, 3))]


@pytest.mark.parametrize("shapes", _SHAPES)
def test_printed_jaxpr_is_jaxs(shapes):
    args = [_u32(s, i) for i, s in enumerate(shapes)]
    mine = _printed(mjax.make_jaxpr, _bind(MP), *args)
    assert mine == _printed(jax.make_jaxpr, _bind(JP), *args)
    out = tuple(np.broadcast_shapes(*shapes))
    assert mjax.eval_shape(_bind(MP), *args)[0].shape == out


@pytest.mark.parametrize("shapes,message", [
    (((2,), (3,), (2,), (2,)),
     "threefry2x32 got incompatible shapes for broadcasting: (2,), (3,), (2,), (2,)."),
    (((2, 1), (), (2,), (2,)),
     "threefry2x32: arrays must have the same number of dimensions, got {1, 2}"),
    (((3, 4), (4, 3), (), ()),
     "threefry2x32 got incompatible shapes for broadcasting: (3, 4), (4, 3).")])
def test_shape_errors_are_jaxs(shapes, message):
    args = [_u32(s) for s in shapes]
    for lib, p in ((jax, JP), (mjax, MP)):
        with pytest.raises(TypeError, match=re.escape(message)):
            lib.make_jaxpr(_bind(p))(*args)
        with pytest.raises(TypeError, match=re.escape(message)):
            p.bind(*args)


def test_dtype_error_is_jaxs():
    args = [np.int32(1), np.uint32(2), _u32((3,)), _u32((3,))]
    message = ("Arguments to threefry2x32 must have uint32 type, got (ShapedArray(int32[]), "
               "ShapedArray(uint32[]), ShapedArray(uint32[3]), ShapedArray(uint32[3]))")
    for lib, p in ((jax, JP), (mjax, MP)):
        with pytest.raises(TypeError, match=re.escape(message)):
            lib.make_jaxpr(_bind(p))(*args)


# ---- values -------------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", _SHAPES)
def test_values_are_jaxs(shapes):
    args = [_u32(s, i) for i, s in enumerate(shapes)]
    out = tuple(np.broadcast_shapes(*shapes))
    # JAX on the operands broadcast beforehand (every rule takes those), and JAX's
    # unrolled rule on them as they are
    want = JP.bind(*[np.broadcast_to(a, out) for a in args])
    _same(_jax_unrolled(*args), want)
    _same(MP.bind(*args), want)
    _same(mjax.jit(_bind(MP))(*args), want)
    if _jax_cpu_takes(*shapes):
        _same(JP.bind(*args), want)
        _same(jax.jit(_bind(JP))(*args), want)
    else:   # (JAX's CPU rule refuses these: see the docstring)
        with pytest.raises(TypeError, match="carry input and carry output"):
            JP.bind(*args)


def test_lowered_for_a_tpu_and_a_gpu():
    # (JAX's TPU and GPU rules take what its CPU rule refuses; so do mjax's)
    args = [_u32(s) for s in _SHAPES[0]]
    for platform in ("tpu", "cuda"):
        for lib, p in ((jax, JP), (mjax, MP)):
            text = lib.jit(_bind(p)).trace(*args).lower(
                lowering_platforms=(platform,)).as_text()
            assert "tensor<3x4xui32>" in text


# ---- jax.extend.random.threefry_2x32 --------------------------------------------------------
@pytest.mark.parametrize("key_shape,count_shape", [
    ((2,), (7,)), ((2, 3), (6,)), ((2, 1), (5,)), ((2, 4), (2, 4)), ((2, 1), (3, 2))])
def test_threefry_2x32_with_key_arrays_is_jaxs(key_shape, count_shape):
    # a keypair array's words are arrays: one key per counter pair, or a size-1 one
    # broadcast
    keys, count = _u32(key_shape, 1), _u32(count_shape, 2)
    f = lambda k, c: mrandom.threefry_2x32(k, c)
    g = lambda k, c: jrandom.threefry_2x32(k, c)
    want = np.asarray(g(keys, count))
    for got in (f(keys, count), mjax.jit(f)(keys, count)):
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape == count_shape
        np.testing.assert_array_equal(got, want)
    hashes = lambda s: re.findall(r"\S+ = threefry2x32 [^=]*", s)
    mine = hashes(_printed(mjax.make_jaxpr, f, keys, count))
    assert mine and mine == hashes(_printed(jax.make_jaxpr, g, keys, count))


def test_threefry_2x32_refuses_what_jax_refuses():
    # words of rank 2 against halves of rank 1: JAX's rank error
    keys, count = _u32((2, 1, 1)), _u32((4,))
    for fn in (jrandom.threefry_2x32, mrandom.threefry_2x32):
        with pytest.raises(TypeError, match="must have the same number of dimensions"):
            fn(keys, count)


def test_threefry_2x32_pads_an_odd_count_as_jax():
    # (JAX's padding: a captured uint32[1] zero, its out[:-1] after)
    k1, k2, count = np.uint32(3), np.uint32(4), _u32((5,))
    mine = _printed(mjax.make_jaxpr, lambda a, b, c: mrandom.threefry_2x32((a, b), c),
                    k1, k2, count)
    theirs = _printed(jax.make_jaxpr, lambda a, b, c: jrandom.threefry_2x32((a, b), c),
                      k1, k2, count)
    assert mine == theirs


# ---- vmap: JAX's broadcast_batcher ----------------------------------------------------------
_VMAPS = [
    # (every non-scalar batched at one dim with one shape: the hash runs there)
    ((None, None, 1, 1), ((), (), (3, 5), (3, 5))),
    ((0, 0, 0, 0), ((5, 3), (5, 3), (5, 3), (5, 3))),
    # (otherwise batch axes to the front, 1s for the unbatched, the hash broadcasts)
    ((0, None, 1, None), ((5, 1), (4,), (1, 5), (1,))),
    ((0, None, None, None), ((5,), (), (3,), (3,))),
    ((None, 0, 0, None), ((1, 3), (6,), (6, 1, 3), (2, 3))),
    ((1, None, 0, 0), ((2, 6), (), (6, 2), (6, 1)))]


@pytest.mark.parametrize("in_axes,shapes", _VMAPS)
def test_vmap_is_jaxs(in_axes, shapes):
    args = [_u32(s, i) for i, s in enumerate(shapes)]
    mine_f = mjax.vmap(_bind(MP), in_axes=in_axes)
    theirs_f = jax.vmap(_bind(JP), in_axes=in_axes)
    assert _printed(mjax.make_jaxpr, mine_f, *args) == \
        _printed(jax.make_jaxpr, theirs_f, *args)
    # values: each member against JAX on it, its operands broadcast beforehand
    size = next(a.shape[d] for a, d in zip(args, in_axes) if d is not None)
    want = [[], []]
    for i in range(size):
        member = [a if d is None else np.take(a, i, axis=d) for a, d in zip(args, in_axes)]
        out = np.broadcast_shapes(*(m.shape for m in member))
        for j, w in enumerate(JP.bind(*[np.broadcast_to(m, out) for m in member])):
            want[j].append(np.asarray(w))
    want = [np.stack(w) for w in want]
    _same(mine_f(*args), want)
    _same(mjax.jit(mine_f)(*args), want)


def test_vmap_of_a_key_word_through_threefry_2x32():
    # (JAX's CPU rule refuses this one: the batched key word becomes u32[3,1] beside the
    # scalar other; mjax computes JAX's TPU values, its printed jaxpr JAX's)
    keys, counts, k2 = _u32((3,)), _u32((3, 7)), np.uint32(7)
    f = lambda k, c: mrandom.threefry_2x32((k, k2), c)
    g = lambda k, c: jrandom.threefry_2x32((k, k2), c)
    assert _printed(mjax.make_jaxpr, mjax.vmap(f), keys, counts) == \
        _printed(jax.make_jaxpr, jax.vmap(g), keys, counts)
    got = np.asarray(mjax.vmap(f)(keys, counts))
    for i in range(3):
        np.testing.assert_array_equal(got[i], np.asarray(g(keys[i], counts[i])))
    if jax.default_backend() != "cpu":     # (JAX's unrolled rule takes it)
        np.testing.assert_array_equal(got, np.asarray(jax.vmap(g)(keys, counts)))
    else:
        with pytest.raises(TypeError, match="carry input and carry output"):
            jax.vmap(g)(keys, counts)
