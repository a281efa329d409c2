"""PRNG ops: typed key arrays (`!jaxpr.key<impl>` elements) and the threefry hash.

A key array of shape S and impl I has the physical form `uint32[*S, *key_shape(I)]`
(threefry2x32: 2 words, rbg/unsafe_rbg: 4). `random_wrap`/`random_unwrap` convert
between the two; the other key ops map over every key of their operand.
"""
from __future__ import annotations

import numpy as np

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.dtype_rules import check_dtype, check_same_shapes
from mjax.dialect.types import KeyType, ShapedArray, register_key_type, short_dtype_name

# impl name -> trailing shape of its uint32 key data. JAX: PRNGImpl.key_shape.
# pallas_tpu: the keys of the TPU kernel PRNG (pltpu.to_pallas_key), seeds of the
# chip's hardware generator that only Mosaic kernels draw from; _pallas_internal_stateful:
# the placeholder key of pltpu.stateful_* (they draw from the generator as seeded).
KEY_SHAPES = {"threefry2x32": (2,), "rbg": (4,), "unsafe_rbg": (4,), "pallas_tpu": (1, 2),
              "_pallas_internal_stateful": ()}
_IMPLS = tuple(KEY_SHAPES)
_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def key_shape(impl: str) -> tuple[int, ...]:
    return KEY_SHAPES[impl]


def register_key_impl(impl: str, shape: tuple[int, ...], tag: str) -> None:
    """A user-defined PRNG implementation (jax.extend.random.define_prng_impl): its keys
    exist as types, while its seed/split/bits/fold_in run as the user's functions on the
    key data, so no random_* op ever names it (their `impl` choices stay the built-ins)."""
    KEY_SHAPES[impl] = tuple(shape)
    register_key_type(impl, tag, 4 * int(np.prod(shape, dtype=np.int64)))


def _check_keys(op: str, keys: ShapedArray) -> KeyType:
    if not isinstance(keys.dtype, KeyType):
        raise TypeError(f"{op} expects a PRNG key array, got dtype "
                        f"{short_dtype_name(keys.dtype)}")
    if keys.dtype.impl not in KEY_SHAPES:
        raise TypeError(f"{op}: unknown PRNG implementation '{keys.dtype.impl}'")
    return keys.dtype


def _check_uint32(op: str, x: ShapedArray, what: str):
    if isinstance(x.dtype, KeyType) or np.dtype(x.dtype) != np.uint32:
        raise TypeError(f"{op} requires {what} of dtype uint32, got "
                        f"{short_dtype_name(x.dtype)}")


class RandomSeedOp(JaxprOp, name="random_seed"):
    """One key per integer seed (same shape). JAX: prng.random_seed_p."""
    attributes = {"impl": A.Str(choices=_IMPLS)}

    @classmethod
    def infer(cls, seeds, *, impl):
        check_dtype("random_seed", seeds, "int", what="seed")
        return (ShapedArray(seeds.shape, KeyType(impl)),)


class RandomWrapOp(JaxprOp, name="random_wrap"):
    """uint32[*S, *key_shape] key data -> key<impl>[*S]. JAX: prng.random_wrap_p."""
    attributes = {"impl": A.Str(choices=_IMPLS)}

    @classmethod
    def infer(cls, data, *, impl):
        _check_uint32("random_wrap", data, "key data")
        ks = KEY_SHAPES[impl]
        if data.shape[len(data.shape) - len(ks):] != ks or len(data.shape) < len(ks):
            raise TypeError(f"random_wrap: key data of impl {impl} must have trailing "
                            f"shape {ks}, got shape {data.shape}")
        return (ShapedArray(data.shape[:len(data.shape) - len(ks)], KeyType(impl)),)


class RandomUnwrapOp(JaxprOp, name="random_unwrap"):
    """key<impl>[*S] -> its uint32[*S, *key_shape] data. JAX: prng.random_unwrap_p."""

    @classmethod
    def infer(cls, keys):
        kt = _check_keys("random_unwrap", keys)
        return (ShapedArray(keys.shape + KEY_SHAPES[kt.impl], np.uint32),)


class RandomSplitOp(JaxprOp, name="random_split"):
    """New keys of shape `shape` from each key: result shape keys.shape + shape.
    JAX: prng.random_split_p."""
    attributes = {"shape": A.Shape()}

    @classmethod
    def infer(cls, keys, *, shape):
        _check_keys("random_split", keys)
        if any(d < 0 for d in shape):
            raise ValueError(f"random_split: shape {shape} has a negative dimension")
        return (ShapedArray(keys.shape + tuple(shape), keys.dtype),)


class RandomFoldInOp(JaxprOp, name="random_fold_in"):
    """Mixes uint32 `msgs` into keys of the same shape. JAX: prng.random_fold_in_p."""
    num_operands = 2

    @classmethod
    def infer(cls, keys, msgs):
        _check_keys("random_fold_in", keys)
        _check_uint32("random_fold_in", msgs, "messages")
        check_same_shapes("random_fold_in", (keys, msgs))
        return (keys,)


class RandomBitsOp(JaxprOp, name="random_bits"):
    """`bit_width`-bit unsigned random bits of `shape` from each key: result shape
    keys.shape + shape. JAX: prng.random_bits_p."""
    attributes = {"bit_width": A.Int(), "shape": A.Shape()}

    @classmethod
    def infer(cls, keys, *, bit_width, shape):
        _check_keys("random_bits", keys)
        if bit_width not in _UINT:
            raise TypeError(f"random_bits: bit_width must be 8, 16, 32 or 64, got "
                            f"{bit_width}")
        if any(d < 0 for d in shape):
            raise ValueError(f"random_bits: shape {shape} has a negative dimension")
        return (ShapedArray(keys.shape + tuple(shape), _UINT[bit_width]),)


class RandomCloneOp(JaxprOp, name="random_clone"):
    """The same keys (a marker for key-reuse checking). JAX: random_clone_p."""

    @classmethod
    def infer(cls, keys):
        _check_keys("random_clone", keys)
        return (keys,)


class Threefry2x32Op(JaxprOp, name="threefry2x32"):
    """The Threefry-2x32 block hash (20 rounds) of counters (x1, x2) under key (k1, k2):
    four uint32 arrays -> two, broadcast as JAX's threefry2x32_p broadcasts them
    (lax.broadcasting_shape_rule): scalars to any shape, the other operands of one rank
    with equal dimensions or 1s (jax.extend.random.threefry_2x32 passes the key words as
    scalars). JAX: threefry2x32_p."""
    num_operands = 4

    @classmethod
    def infer(cls, k1, k2, x1, x2):
        avals = (k1, k2, x1, x2)
        if any(isinstance(a.dtype, KeyType) or np.dtype(a.dtype) != np.uint32
               for a in avals):
            raise TypeError(f"Arguments to threefry2x32 must have uint32 type, got "
                            f"{avals}")
        out = ShapedArray(broadcasting_shape("threefry2x32", *avals), np.uint32)
        return out, out


def broadcasting_shape(op: str, *avals) -> tuple:
    """JAX's lax.broadcasting_shape_rule: the shape of the operands other than scalars,
    which have one rank and per dimension equal sizes or 1s (TypeError otherwise, JAX's
    text)."""
    shapes = [tuple(a.shape) for a in avals if a.shape]
    if not shapes:
        return ()
    ranks = {len(s) for s in shapes}
    if len(ranks) != 1:
        raise TypeError(f"{op}: arrays must have the same number of dimensions, got "
                        f"{ranks}")
    out = []
    for ds in zip(*shapes):
        others = [d for d in ds if not (isinstance(d, (int, np.integer)) and d == 1)]
        if not others:
            out.append(1)
        elif all(d is others[0] or d == others[0] for d in others[1:]):
            out.append(others[0])
        else:
            raise TypeError(f"{op} got incompatible shapes for broadcasting: "
                            f"{', '.join(str(s) for s in shapes)}.")
    return tuple(out)


# XLA's RngBitGenerator algorithms, by JAX's names (lax.RandomAlgorithm).
RNG_ALGORITHMS = ("RNG_DEFAULT", "RNG_THREE_FRY", "RNG_PHILOX")


class RngBitGeneratorOp(JaxprOp, name="rng_bit_generator"):
    """XLA's RngBitGenerator: from a key (uint32[4], or uint64[2]) the next key and
    uniformly random unsigned bits of `shape` and `dtype`, by `algorithm`.
    JAX: lax.rng_bit_generator_p."""
    attributes = {"shape": A.Shape(), "dtype": A.DType(),
                  "algorithm": A.Str(default="RNG_DEFAULT", choices=RNG_ALGORITHMS)}

    @classmethod
    def infer(cls, key, *, shape, dtype, algorithm="RNG_DEFAULT"):
        kd = None if isinstance(key.dtype, KeyType) else np.dtype(key.dtype)
        if not ((key.shape == (4,) and kd == np.uint32)
                or (key.shape == (2,) and kd == np.uint64)):
            raise TypeError(f"rng_bit_generator: the key must be uint32[4] or uint64[2], "
                            f"got {short_dtype_name(key.dtype)}{list(key.shape)}")
        if np.dtype(dtype) not in {np.dtype(t) for t in _UINT.values()}:
            raise TypeError(f"rng_bit_generator: unsupported dtype {np.dtype(dtype)}")
        if any(d < 0 for d in shape):
            raise ValueError(f"rng_bit_generator: shape {shape} has a negative dimension")
        return key, ShapedArray(tuple(shape), np.dtype(dtype))


class RngUniformOp(JaxprOp, name="rng_uniform"):
    """XLA's stateful RngUniform: numbers of `shape` uniform in [a, b) from the backend's
    own generator state (each execution draws anew), for scalar a and b of one float or
    integer dtype. JAX: lax.rng_uniform_p."""
    pure = False        # (two draws are two draws: never merged by CSE)
    num_operands = 2
    attributes = {"shape": A.Shape()}

    @classmethod
    def infer(cls, a, b, *, shape):
        check_dtype("rng_uniform", a, "int", "float")
        if a.dtype != b.dtype:
            raise ValueError(f"Arguments to rng_uniform must have identical dtypes, got "
                             f"{getattr(a.dtype, 'name', a.dtype)} and "
                             f"{getattr(b.dtype, 'name', b.dtype)}.")
        if a.shape or b.shape:
            raise ValueError(f"Arguments to rng_uniform must be scalars; got shapes "
                             f"{a.shape} and {b.shape}.")
        return (ShapedArray(tuple(shape), a.dtype),)


__all__ = [n for n in dir() if n.endswith("Op")]
