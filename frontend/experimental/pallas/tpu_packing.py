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
    """The equation as JAX's steps: ("reshape", shape) splitting the input's groups one
    at a time, ("transpose", perm) where the order changes, then ("reshape", shape)
    merging the output's groups one at a time."""
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
    steps, dims = [], list(shape)
    at = 0
    for g in lhs:
        if len(g) > 1:
            dims[at:at + 1] = [known[n] for n in g]
            steps.append(("reshape", tuple(dims)))
        at += len(g)
    if names_in != names_out:
        perm = tuple(names_in.index(n) for n in names_out)
        dims = [dims[i] for i in perm]
        steps.append(("transpose", perm))
    for at, g in enumerate(rhs):
        if len(g) > 1:
            dims[at:at + len(g)] = [math.prod(dims[at:at + len(g)])]
            steps.append(("reshape", tuple(dims)))
    return steps


def einshape(equation: str, x, assert_is_tile_preserving: bool = False, **sizes):
    """Splits, transposes and merges the dims of `x` by an einshape equation
    ("a(bc)->bac": split the second dim into b and c, then order them b, a, c; sizes
    that cannot be inferred given as keywords). Lowered as reshapes and a transpose
    (JAX's general einshape kernel). JAX: pltpu.einshape."""
    x = jnp.asarray(x)
    steps = einshape_steps(equation, x.shape, **sizes)
    if assert_is_tile_preserving and len(steps) > 1:
        raise NotImplementedError("pltpu.einshape(assert_is_tile_preserving=True) with "
                                  "more than one reshape or transpose: mjax lowers "
                                  "einshape as reshapes and a transpose only")
    for kind, arg in steps:
        x = x.reshape(arg) if kind == "reshape" else lax.transpose(x, arg)
    return x
