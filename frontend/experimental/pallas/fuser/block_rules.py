"""Per-primitive rules of the fuser's block-spec propagation (tables in block_types.py):
elementwise ops, broadcasts, casts, transposes, slices, dynamic slices (their starts are
scalar prefetch), squeeze, dot_general (2D) and reduce_sum. A primitive without a rule
stops pull_block_spec / push_block_spec with NotImplementedError naming it (JAX's fuser
has rules for only some primitives too). JAX: block_spec.py's rule section.
"""
from __future__ import annotations

import functools

from mjax import lax
from mjax.tracing.primitive import op_primitives
from mjax.experimental.pallas.core import BlockSpec, Element, no_block_spec
from mjax.experimental.pallas.fuser.block_types import (EVAL_RULES, PULL_RULES,
                                                        PUSH_RULES, USAGE_RULES,
                                                        SCALAR_OPERAND_RULES,
                                                        BlockIndexTransform, Usage,
                                                        block_size, is_squeezed,
                                                        no_block_index_transform)

_P = op_primitives()


def _prim(name):
    return _P[f"{name}_p"]


def _update(t: tuple, i: int, x) -> tuple:
    return t[:i] + (x,) + t[i + 1:]


def _bind(prim, ctx, *args, **params):
    return prim.bind(*args, **params)


# ---- elementwise ---------------------------------------------------------------------
def _same_transform(ctx, transform, **params):
    return [transform] * len(ctx.avals_in)


def _same_spec(ctx, spec, **params):
    return spec


def _unary_usage(ctx, used, **params):
    return [used]


for _name in ("exp", "exp2", "tanh", "sin", "cos", "tan", "sqrt", "rsqrt", "cbrt",
              "square", "log", "log1p", "expm1", "integer_pow", "logistic", "neg", "abs",
              "sign", "floor", "ceil", "round", "not", "erf", "erf_inv", "is_finite",
              "multiple_of", "reduce_precision", "real", "imag", "conj"):
    if f"{_name}_p" in _P:
        _p = _P[f"{_name}_p"]
        PULL_RULES[_p] = _same_transform
        PUSH_RULES[_p] = _same_spec
        USAGE_RULES[_p] = _unary_usage
        EVAL_RULES[_p] = functools.partial(_bind, _p)


def _pull_size_one_dim(transform, i):
    """`transform` for an operand whose dim `i` has size 1 where the result's does not."""
    def index(*idxs):
        return _update(tuple(transform.block_index_transform(*idxs)), i, 0)
    if is_squeezed(transform.block_shape[i]):
        return transform.replace(block_index_transform=index)
    one = Element(1) if isinstance(transform.block_shape[i], Element) else 1
    return transform.replace(block_shape=_update(tuple(transform.block_shape), i, one),
                             block_index_transform=index)


def _binop_pull(ctx, transform, **params):
    lhs, rhs = ctx.avals_in
    if not rhs.shape:
        return [transform, no_block_index_transform]
    if not lhs.shape:
        return [no_block_index_transform, transform]
    lt = rt = transform
    for i, (l, r) in enumerate(zip(lhs.shape, rhs.shape)):
        if l == 1 and r != 1:
            lt = _pull_size_one_dim(lt, i)
        if r == 1 and l != 1:
            rt = _pull_size_one_dim(rt, i)
    return [lt, rt]


def _binop_usage(ctx, used, **params):
    if used == {Usage.SCALAR_PREFETCH}:
        return [{Usage.SCALAR_PREFETCH}] * len(ctx.avals_in)
    if used == {Usage.REGULAR}:
        return [{Usage.REGULAR}] * len(ctx.avals_in)
    return [set()] * len(ctx.avals_in)


def _binop_push(ctx, lspec, rspec, **params):
    lhs, rhs = ctx.avals_in
    if not rhs.shape:
        return lspec
    if not lhs.shape:
        return rspec
    has_l, has_r = lspec is not no_block_spec, rspec is not no_block_spec
    if has_l and has_r:
        if lspec is rspec:
            return lspec
        raise ValueError("Illegal binary push. One of the block specs must be "
                         "no_block_spec.")
    for l, r in zip(lhs.shape, rhs.shape):
        if l == 1 and r != 1 and has_l:
            raise ValueError("Cannot propagate block spec through LHS broadcast.")
        if r == 1 and l != 1 and has_r:
            raise ValueError("Cannot propagate block spec through RHS broadcast.")
    return lspec if has_l else rspec


for _name in ("mul", "add", "sub", "div", "rem", "max", "min", "lt", "le", "eq", "ne",
              "gt", "ge", "or", "xor", "and", "shift_right_logical", "shift_left",
              "shift_right_arithmetic", "pow", "atan2", "nextafter", "add_any"):
    if f"{_name}_p" in _P:
        _p = _P[f"{_name}_p"]
        PULL_RULES[_p] = _binop_pull
        PUSH_RULES[_p] = _binop_push
        USAGE_RULES[_p] = _binop_usage
        EVAL_RULES[_p] = functools.partial(_bind, _p)


def _select_n_pull(ctx, transform, **params):
    if ctx.avals_in[0].shape:
        return [transform] * len(ctx.avals_in)
    return [no_block_index_transform] + [transform] * (len(ctx.avals_in) - 1)


def _select_n_push(ctx, *specs, **params):
    given = [s for s in specs if s is not no_block_spec]
    if any(s is not given[0] for s in given[1:]):
        raise NotImplementedError("select_n with multiple differing inputs not "
                                  "supported yet")
    return given[0]


PULL_RULES[lax.select_n_p] = _select_n_pull
PUSH_RULES[lax.select_n_p] = _select_n_push
EVAL_RULES[lax.select_n_p] = lambda ctx, *args: lax.select_n(*args)

for _p in (lax.convert_element_type_p,):
    PULL_RULES[_p] = _same_transform
    PUSH_RULES[_p] = _same_spec
    EVAL_RULES[_p] = lambda ctx, x, *, new_dtype, **_: lax.convert_element_type(
        x, new_dtype)


# ---- broadcast_in_dim ---------------------------------------------------------------
def _broadcast_usage(ctx, used, **params):
    if used == {Usage.SCALAR_PREFETCH}:
        raise NotImplementedError("scalar prefetch not supported yet (a broadcast used "
                                  "as a scalar index)")
    if used == {Usage.REGULAR}:
        return [{Usage.SCALAR_PREFETCH} if not ctx.avals_in[0].shape else {Usage.REGULAR}]
    return [set()]


def _broadcast_pull(ctx, transform, *, shape, broadcast_dimensions, **params):
    in_shape = ctx.avals_in[0].shape
    if not in_shape:
        return [no_block_index_transform]

    def index(*idxs):
        idx = transform.block_index_transform(*idxs)
        return tuple(0 if d == 1 else idx[i] for i, d in zip(broadcast_dimensions, in_shape))

    block_shape = tuple(
        b if (b := transform.block_shape[i]) is None or d != 1 else 1
        for i, d in zip(broadcast_dimensions, in_shape))
    return [transform.replace(block_shape=block_shape, block_index_transform=index)]


def _broadcast_eval(ctx, x, *, shape, broadcast_dimensions, **params):
    if ctx.avals_in[0].shape == tuple(shape):
        return x
    full = tuple(block_size(b) for b in ctx.out_block_specs[0].block_shape)
    dims = tuple(d - sum(s is None for s in full[:d]) for d in broadcast_dimensions
                 if full[d] is not None)
    return lax.broadcast_in_dim(x, tuple(s for s in full if s is not None), dims)


def _broadcast_push(ctx, spec, *, shape, broadcast_dimensions, **params):
    in_shape = ctx.avals_in[0].shape
    dim_map = {out: i for i, out in enumerate(broadcast_dimensions)}
    block_shape = []
    for i, s in enumerate(shape):
        if i in dim_map and in_shape[dim_map[i]] == s:
            block_shape.append(spec.block_shape[dim_map[i]])
        else:
            if i in dim_map and block_size(spec.block_shape[dim_map[i]]) != 1:
                raise NotImplementedError("push_block_spec: broadcasting a blocked "
                                          "dimension")
            block_shape.append(s)

    def index_map(*args):
        idx = spec.index_map(*args)
        return tuple(idx[dim_map[i]] if i in dim_map else 0 for i in range(len(shape)))
    return BlockSpec(tuple(block_shape), index_map)


PULL_RULES[lax.broadcast_in_dim_p] = _broadcast_pull
PUSH_RULES[lax.broadcast_in_dim_p] = _broadcast_push
USAGE_RULES[lax.broadcast_in_dim_p] = _broadcast_usage
EVAL_RULES[lax.broadcast_in_dim_p] = _broadcast_eval


# ---- transpose, squeeze --------------------------------------------------------------
def _check_minor_perm(permutation):
    if set(permutation[-2:]) != {len(permutation) - 1, len(permutation) - 2}:
        raise NotImplementedError(
            "Cannot permute last two dimensions with leading dimensions.")


def _transpose_pull(ctx, transform, *, permutation):
    _check_minor_perm(permutation)
    inverse = [permutation.index(d) for d in range(len(permutation))]

    def index(*idxs):
        idx = transform.block_index_transform(*idxs)
        return tuple(idx[i] for i in inverse)
    return [transform.replace(
        block_shape=tuple(transform.block_shape[i] for i in inverse),
        block_index_transform=index)]


def _transpose_eval(ctx, x, *, permutation):
    # (blocks lack their squeezed dims: permute the others among themselves)
    block_shape = ctx.out_block_specs[0].block_shape
    kept = [k for k, b in enumerate(block_shape) if not is_squeezed(b)]
    order = {p: n for n, p in enumerate(sorted(permutation[k] for k in kept))}
    return lax.transpose(x, tuple(order[permutation[k]] for k in kept))


def _transpose_push(ctx, spec, *, permutation):
    _check_minor_perm(permutation)

    def index_map(*args):
        idx = spec.index_map(*args)
        return tuple(idx[i] for i in permutation)
    return BlockSpec(tuple(spec.block_shape[i] for i in permutation), index_map)


PULL_RULES[lax.transpose_p] = _transpose_pull
PUSH_RULES[lax.transpose_p] = _transpose_push
EVAL_RULES[lax.transpose_p] = _transpose_eval


def _squeeze_pull(ctx, transform, *, dimensions):
    def index(*idxs):
        idx = tuple(transform.block_index_transform(*idxs))
        for d in sorted(dimensions):
            idx = idx[:d] + (0,) + idx[d:]
        return idx
    block_shape = tuple(transform.block_shape)
    for d in sorted(dimensions):
        block_shape = block_shape[:d] + (None,) + block_shape[d:]
    return [transform.replace(block_shape=block_shape, block_index_transform=index)]


PULL_RULES[lax.squeeze_p] = _squeeze_pull
EVAL_RULES[lax.squeeze_p] = lambda ctx, x, **_: x


# ---- slices ---------------------------------------------------------------------------
def _check(pred: bool, msg: str):
    # (static starts only: a traced start is checked by nothing, as JAX's checkify
    # check only runs under checkify)
    if not pred:
        raise ValueError(msg)


class UnalignedSlice(ValueError, AssertionError):
    """A static slice not on block boundaries: JAX's slice rule asserts it (an
    AssertionError); a ValueError as mjax's other bad block shapes."""


def _offset(dim, index, start, size):
    """Block index `index` of a slice starting at element `start` (of `size` elements)
    as a block index of the sliced array."""
    if isinstance(start, int) and start == 0:
        return index
    if is_squeezed(dim) or isinstance(dim, Element):
        return index + start
    b = block_size(dim)
    if isinstance(start, int):
        _check(start % b == 0, f"slice_start is not a multiple of block_size {b}")
    if isinstance(size, int):
        _check(size % b == 0, f"slice_size is not a multiple of block_size {b}")
    return index + start // b


def _slice_pull(ctx, transform, *, start_indices, limit_indices, strides):
    if strides is not None and any(s != 1 for s in strides):
        raise NotImplementedError("strides are not supported yet")
    sizes = tuple(int(e - s) for s, e in zip(start_indices, limit_indices))
    for dim, start, size in zip(transform.block_shape, start_indices, sizes):
        if is_squeezed(dim):
            continue
        b = block_size(dim)
        if isinstance(dim, Element):
            if b > size:
                raise ValueError(f"Block size {b} is larger than the slice size {size}")
        elif start % b or size % b:
            raise UnalignedSlice(f"slice of {sizes} from {tuple(start_indices)} does not "
                                 f"fall on blocks of {tuple(transform.block_shape)}")

    def index(*idxs):
        idx = transform.block_index_transform(*idxs)
        return tuple(_offset(d, i, st, sz) for d, i, st, sz in
                     zip(transform.block_shape, idx, start_indices, sizes))
    return [transform.replace(block_index_transform=index)]


def _dynamic_slice_usage(ctx, used, **params):
    if used == {Usage.SCALAR_PREFETCH}:
        raise NotImplementedError("scalar prefetch not supported yet (a dynamic_slice "
                                  "used as a scalar index)")
    if used == {Usage.REGULAR}:
        return [used] + [{Usage.SCALAR_PREFETCH}] * (len(ctx.avals_in) - 1)
    return [set()] * len(ctx.avals_in)


def _dynamic_slice_pull(ctx, transform, *, slice_sizes):
    def index(*idxs):
        starts = ctx.scalar_prefetch_fn()
        if len(starts) != len(transform.block_shape):
            raise ValueError(f"Expected {len(transform.block_shape)} slice starts, got "
                             f"{len(starts)}")
        idx = transform.block_index_transform(*idxs)
        return tuple(_offset(d, i, st, sz) for d, i, st, sz in
                     zip(transform.block_shape, idx, starts, slice_sizes))
    return ([transform.replace(block_index_transform=index)]
            + [no_block_index_transform] * (len(ctx.avals_in) - 1))


PULL_RULES[lax.slice_p] = _slice_pull
EVAL_RULES[lax.slice_p] = lambda ctx, x, **_: x     # (the BlockSpec did the slicing)
PULL_RULES[lax.dynamic_slice_p] = _dynamic_slice_pull
USAGE_RULES[lax.dynamic_slice_p] = _dynamic_slice_usage
SCALAR_OPERAND_RULES.add(lax.dynamic_slice_p)
EVAL_RULES[lax.dynamic_slice_p] = lambda ctx, x, *starts, **_: x


# ---- dot_general, reduce_sum ---------------------------------------------------------
def _dot_general_pull(ctx, transform, *, dimension_numbers, **params):
    if transform is no_block_index_transform:
        return [no_block_index_transform] * 2
    lhs, rhs = ctx.avals_in
    if lhs.ndim != 2 or rhs.ndim != 2:
        raise NotImplementedError("Only 2D dot_general supported.")
    (lc, rc), (lb, rb) = dimension_numbers
    if lb or rb:
        raise NotImplementedError("Batch dimensions not supported")
    if len(lc) != 1 or len(rc) != 1:
        raise NotImplementedError("Multiple contracting dimensions not supported")
    k = lhs.shape[lc[0]]

    def make(contracting, out_dim):
        free = 1 - contracting

        def index(*idxs):
            out = transform.block_index_transform(*idxs)
            res = [0, 0]      # (the contracted dim is whole: block 0)
            res[free] = out[out_dim]
            return tuple(res)
        shape = [k, k]
        shape[free] = transform.block_shape[out_dim]
        return BlockIndexTransform(tuple(shape), index,
                                   pipeline_mode=transform.pipeline_mode)
    return [make(lc[0], 0), make(rc[0], 1)]


def _dot_general_usage(ctx, used, **params):
    return [{Usage.REGULAR}] * 2 if Usage.REGULAR in used else [set(), set()]


PULL_RULES[lax.dot_general_p] = _dot_general_pull
USAGE_RULES[lax.dot_general_p] = _dot_general_usage
EVAL_RULES[lax.dot_general_p] = functools.partial(_bind, lax.dot_general_p)


def _dot_general_push(ctx, *specs, **params):
    raise NotImplementedError("push_block_spec: dot_general not supported yet")


PUSH_RULES[lax.dot_general_p] = _dot_general_push


def _reduce_sum_pull(ctx, transform, *, axes, **params):
    in_shape = ctx.avals_in[0].shape

    def index(*idxs):
        idx = iter(transform.block_index_transform(*idxs))
        return tuple(0 if d in axes else next(idx) for d in range(len(in_shape)))
    rest = iter(transform.block_shape)
    shape = tuple(in_shape[d] if d in axes else next(rest) for d in range(len(in_shape)))
    return [transform.replace(block_shape=shape, block_index_transform=index)]


def _reduce_sum_eval(ctx, x, *, axes, **params):
    # (the block's reduced dims: its dims less the squeezed ones before each)
    in_shape = ctx.in_block_specs[0].block_shape
    kept = [d for d in range(len(in_shape)) if not is_squeezed(in_shape[d])]
    return lax.reduce_sum_p.bind(x, axes=tuple(kept.index(a) for a in axes))


def _reduce_sum_push(ctx, spec, *, axes, **params):
    in_shape = ctx.avals_in[0].shape
    if not all(in_shape[a] == block_size(spec.block_shape[a]) for a in axes):
        raise NotImplementedError(
            f"reduce_sum over partial blocks not supported yet: {in_shape=}, "
            f"{spec.block_shape=}, {axes=}")

    def index_map(*args):
        idx = spec.index_map(*args)
        return tuple(i for d, i in enumerate(idx) if d not in axes)
    return BlockSpec(tuple(b for d, b in enumerate(spec.block_shape) if d not in axes),
                     index_map)


PULL_RULES[lax.reduce_sum_p] = _reduce_sum_pull
EVAL_RULES[lax.reduce_sum_p] = _reduce_sum_eval
PUSH_RULES[lax.reduce_sum_p] = _reduce_sum_push
