"""pltpu's value ops on narrow element types and layouts: `stochastic_round`,
`pack_elementwise`, `unpack_elementwise` (jaxpr ops of dialect/ops/pallas_tpu_packing.py:
Mosaic's tpu.stochastic_convert, tpu.pack_elementwise, tpu.unpack_elementwise) and
`einshape` (reshapes and a transpose, as JAX's general einshape kernel).
JAX: pallas/mosaic/primitives.py and pallas/einshape.py.
"""
from __future__ import annotations

import math

import numpy as np

from mjax import lax
from mjax import numpy as jnp
from mjax.dialect.ops import pallas_tpu_packing as PK
from mjax.experimental.pallas import primitives as _p
from mjax.experimental.pallas.tpu_info import get_tpu_info
from mjax.specs import dtypes
from mjax.tracing.core import aval_of_value, bind


def stochastic_round(x, random_bits, *, target_dtype):
    """f32 `x` rounded to `target_dtype` (bfloat16 or float8_e5m2 / e4m3fn /
    e4m3b11fnuz) down or up in magnitude at random, by the uint32 `random_bits` of x's
    shape: up with probability equal to x's distance from the value below over the
    gap. JAX: pltpu.stochastic_round."""
    xa, ba = aval_of_value(x), aval_of_value(random_bits)
    if ba.shape != xa.shape:
        raise ValueError(f"The shape of `random_bits` must match the shape of `x` for "
                         f"stochastic_round, but got {ba.shape} and {xa.shape}")
    if np.dtype(ba.dtype) != np.uint32:
        raise ValueError(f"The dtype of `random_bits` must be uint32 for "
                         f"stochastic_round, but got {np.dtype(ba.dtype)}")
    target = np.dtype(target_dtype)
    if np.dtype(xa.dtype) != np.float32:          # (JAX's lowering's errors)
        raise ValueError("Only float32 input is supported.")
    if target not in PK.STOCHASTIC_TARGETS:
        raise ValueError("Only bfloat16, float8_e5m2, float8_e4m3fn, and "
                         "float8_e4m3b11fnuz are supported as target dtypes.")
    return bind(PK.StochasticRoundOp, x, random_bits, target_dtype=target)


def pack_elementwise(xs, *, packed_dtype):
    """The arrays `xs` converted to `packed_dtype` (integers: their low bits; f32 ->
    bf16) and interleaved, element by element, into one unsigned word of xs's width, xs[0]
    in the lowest bits. len(xs) must be the packing factor. JAX: pltpu.pack_elementwise."""
    xs = list(xs)
    if not xs:
        raise ValueError("At least one source is required")
    avals = [aval_of_value(x) for x in xs]
    first, packed = avals[0], np.dtype(packed_dtype)
    if any(a.shape != first.shape for a in avals):
        raise ValueError("All sources must have the same shape")
    if any(a.dtype != first.dtype for a in avals):
        raise ValueError("All sources must have the same dtype")
    src = np.dtype(first.dtype)
    if not ((src == np.float32 and packed == dtypes.bfloat16)
            or (PK.is_integer(src) and PK.is_integer(packed))):
        raise ValueError(f"Only f32 -> bf16 and int -> int are supported. Got {src} and "
                         f"{packed}")
    k = PK.packing_factor(src, packed)
    if len(xs) != k:
        raise ValueError(f"The number of sources must match the packing factor ({k}), "
                         f"got {len(xs)}")
    return bind(PK.PackElementwiseOp, *xs, packed_dtype=packed)


def unpack_elementwise(x, *, index, packed_dtype, unpacked_dtype):
    """The `index`-th `packed_dtype` field (0: the lowest bits) of each element of `x`,
    as `unpacked_dtype` (of x's width); the inverse of pack_elementwise.
    JAX: pltpu.unpack_elementwise."""
    a = aval_of_value(x)
    unpacked = np.dtype(unpacked_dtype)
    if PK.bitwidth(a.dtype) != PK.bitwidth(unpacked):
        raise ValueError(f"The bitwidth of `x` must match the bitwidth of `unpacked_dtype` "
                         f"for unpack_elementwise, but got {np.dtype(a.dtype)} and "
                         f"{unpacked}")
    k = PK.packing_factor(unpacked, packed_dtype)
    if index < 0 or index >= k:
        raise ValueError(f"Index {index} is out of bounds for packing factor {k}")
    return bind(PK.UnpackElementwiseOp, x, index=int(index),
                packed_dtype=np.dtype(packed_dtype), unpacked_dtype=unpacked)


# ---- einshape ----------------------------------------------------------------------------
def _groups(side: str) -> list[list[str]]:
    """'a(bc)d' -> [['a'], ['b', 'c'], ['d']]."""
    side, out, i = side.replace(" ", ""), [], 0
    while i < len(side):
        if side[i] == "(":
            j = side.find(")", i)
            if j == -1:
                raise ValueError(f"Unmatched parenthesis in {side!r}")
            out.append(list(side[i + 1:j]))
            i = j + 1
        elif side[i] == ")":
            raise ValueError(f"Unmatched parenthesis in {side!r}")
        else:
            out.append([side[i]])
            i += 1
    return out


def _dim_sizes(lhs, shape, sizes) -> dict:
    """Every name's size: from the input's dims, `sizes`, or the one unknown of a group."""
    if len(lhs) != len(shape):
        raise ValueError(f"Equation LHS has {len(lhs)} groups but input has {len(shape)} "
                         f"dims. LHS: {lhs}, Input shape: {tuple(shape)}")
    known: dict = {}
    for group, dim in zip(lhs, shape):
        if len(group) == 1:
            if group[0] in known and known[group[0]] != dim:
                raise ValueError(f"Inconsistent size for {group[0]}: {known[group[0]]} "
                                 f"vs {dim}")
            known[group[0]] = dim
            continue
        for name in group:
            if name in sizes:
                known[name] = sizes[name]
        unknown = [n for n in group if n not in known]
        product = math.prod(known[n] for n in group if n in known)
        if not unknown and product != dim:
            raise ValueError(f"Size mismatch for group {group}: expected {dim}, got "
                             f"{product}")
        if len(unknown) == 1:
            if dim % product:
                raise ValueError(f"Cannot split size {dim} with known sizes {product}")
            known[unknown[0]] = dim // product
        elif unknown:
            raise ValueError(f"Ambiguous split for {group} with size {dim}. Unknowns: "
                             f"{unknown}. Provide sizes via kwargs.")
    return known


def einshape_steps(equation: str, shape, **sizes) -> list:
    """The equation as JAX's steps, in order: ("split", at, sizes, shape) for each input
    group (dim `at` into `sizes`), ("transpose", perm) where the order changes, then
    ("merge", at, count, shape) for each output group; `shape` is the result's."""
    if equation.count("->") != 1:
        raise ValueError("Equation must contain exactly one '->'")
    lhs, rhs = (_groups(s) for s in equation.split("->"))
    known = _dim_sizes(lhs, shape, sizes)
    names_in = [n for g in lhs for n in g]
    names_out = [n for g in rhs for n in g]
    for n in names_out:
        if n not in known:
            if n not in sizes:
                raise ValueError(f"Unknown dimension {n} in RHS")
            known[n] = sizes[n]
    if set(names_in) != set(names_out):
        raise NotImplementedError("Only reordering/splitting/merging supported (no "
                                  "broadcast yet).")
    steps, dims, at = [], list(shape), 0
    for g in lhs:
        if len(g) > 1:
            parts = tuple(known[n] for n in g)
            dims[at:at + 1] = parts
            steps.append(("split", at, parts, tuple(dims)))
        at += len(g)
    if names_in != names_out:
        perm = tuple(names_in.index(n) for n in names_out)
        dims = [dims[i] for i in perm]
        steps.append(("transpose", perm))
    for at, g in enumerate(rhs):
        if len(g) > 1:
            dims[at:at + len(g)] = [math.prod(dims[at:at + len(g)])]
            steps.append(("merge", at, len(g), tuple(dims)))
    return steps


def einshape(equation: str, x, assert_is_tile_preserving: bool = False, **sizes):
    """Splits, transposes and merges the dims of `x` by an einshape equation
    ("a(bc)->bac": split the second dim into b and c, then order them b, a, c; sizes
    that cannot be inferred given as keywords). Inside a TPU kernel, an equation of
    several steps that keeps the chip's (sublane, lane) tiles whole moves whole tiles
    (slices and one jnp.block), as JAX's einshape kernel; otherwise reshapes and a
    transpose. JAX: pltpu.einshape."""
    x = jnp.asarray(x)
    steps = einshape_steps(equation, x.shape, **sizes)
    if len(steps) > 1 and _in_kernel():
        tiling = _tiling(x.shape, x.dtype)
        if tiling is not None and _tile_dims(x.shape, steps, tiling) is not None:
            return _move_tiles(x, steps, tiling)
        if assert_is_tile_preserving and tiling is not None:
            raise ValueError(f"Tile preserving check failed for einshape kernel with "
                             f"equation: {equation} and shape {tuple(x.shape)} and tiling "
                             f"{(1,) * (x.ndim - 2) + tiling}.")
    for step in steps:
        x = lax.transpose(x, step[1]) if step[0] == "transpose" else x.reshape(step[-1])
    return x


# ---- einshape of whole tiles (JAX's tile-preserving einshape kernel) ------------------------
def _in_kernel() -> bool:
    try:
        _p.current_kernel("pltpu.einshape")
    except ValueError:
        return False
    return True


def _tiling(shape, dtype):
    """The (sublane, lane) tile of a value of `shape` on the current chip (JAX's
    tpu_info.infer_tiling, compact); None for rank < 2 or off a TPU (where JAX's
    lowering raises; interpret mode runs the general kernel, as JAX's does)."""
    if len(shape) < 2:
        return None
    try:
        gen = get_tpu_info().generation
    except ValueError:
        return None
    dt = np.dtype(dtype)
    rows = (1 + int(gen < 4)) * (8 if dt.name == "int4" else 4 // dt.itemsize)
    while rows < min(shape[-2], 8):
        rows *= 2
    return rows, 128


def _merged(factors):
    """Adjacent outer factors as one (any reshape of whole tiles is free)."""
    out = []
    for size, kind in factors:
        if kind == "outer" and out and out[-1][1] == "outer":
            out[-1] = (out[-1][0] * size, "outer")
        else:
            out.append((size, kind))
    return out


def _split(factors, targets):
    """One dim's factors dealt out to the dims `targets` it splits into; None where a
    split would cut a sublane or lane tile."""
    queue, out = _merged(factors), []
    for i, want in enumerate(targets):
        dim, have = [], 1
        while have < want:
            if not queue:
                return None
            size, kind = queue.pop(0)
            if want % (have * size) == 0:                         # all of the factor
                dim.append((size, kind))
                have *= size
            elif (have * size) % want == 0 and kind == "outer":   # some outer tiles
                part = want // have
                dim.append((part, "outer"))
                queue.insert(0, (size // part, "outer"))
                have *= part
            else:
                return None
        if i == len(targets) - 1:                 # (trailing unit factors go last)
            while queue and queue[0][0] == 1:
                dim.append(queue.pop(0))
        out.append(_merged(dim))
    return None if queue else out


def _init_dims(shape, tiling):
    rows, lanes = tiling
    dims, n = [], len(shape)
    for i, size in enumerate(shape):
        kind, tile = (("sublane", rows) if i == n - 2 else ("lane", lanes) if i == n - 1
                      else ("outer", 1))
        factors = [(size // tile, "outer")] if size // tile > 1 else []
        if tile > 1 or kind != "outer":
            factors.append((tile, kind))
        dims.append(_merged(factors))
    return dims


def _apply(dims, step):
    """The dims' factors after one step; None where a split cuts a tile."""
    if step[0] == "transpose":
        return [dims[i] for i in step[1]]
    at = step[1]
    if step[0] == "split":
        parts = _split(dims[at], step[2])
        return None if parts is None else dims[:at] + parts + dims[at + 1:]
    merged = [f for d in dims[at:at + step[2]] for f in d]
    return dims[:at] + [_merged(merged)] + dims[at + step[2]:]


def _tile_dims(shape, steps, tiling):
    """Each dim's (size, kind) factors after `steps` when they keep the tiles whole
    (the last two dims still end in the sublane and the lane tile), else None."""
    rows, lanes = tiling
    if shape[-2] % rows or shape[-1] % lanes:
        return None
    dims = _init_dims(shape, tiling)
    for step in steps:
        dims = _apply(dims, step)
        if dims is None:
            return None
    if len(dims) < 2 or dims[-2][-1:] != [(rows, "sublane")] or \
            dims[-1][-1:] != [(lanes, "lane")]:
        return None
    return dims


def _move_tiles(x, steps, tiling):
    """x cut into its (rows, lanes) tiles (row-major over the tile grid), the grid of
    tiles reshaped and transposed by `steps`, and the tiles put back with jnp.block."""
    rows, lanes = tiling
    grid = tuple(x.shape[:-2]) + (x.shape[-2] // rows, x.shape[-1] // lanes)
    tiles = np.empty(grid, dtype=object)
    for idx in np.ndindex(*grid):
        *lead, i, j = idx
        tiles[idx] = x[(*lead, slice(i * rows, (i + 1) * rows),
                        slice(j * lanes, (j + 1) * lanes))]
    dims = _init_dims(x.shape, tiling)
    for step in steps:
        dims = _apply(dims, step)
        if step[0] == "transpose":
            tiles = np.transpose(tiles, step[1])
        else:
            tiles = tiles.reshape(tuple(math.prod(s for s, k in d if k == "outer")
                                        for d in dims))
    return jnp.block(tiles.tolist())
