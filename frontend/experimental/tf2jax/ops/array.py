"""Shapes, layout, slicing, gathering, padding, identities and TensorLists.

A TensorList (what `tf.TensorArray` and Keras RNNs use) is represented by the stacked
array of its elements: its length and element shape are static here.
"""
from __future__ import annotations

import numpy as np

import mjax.lax as lax
import mjax.numpy as jnp
from mjax.vmap.batching import vmap
from mjax.tracing.core import Tracer
from mjax.experimental.tf2jax.ops.registry import (UnsupportedOperationError, cast,
                                                   is_numpy, register, shape_of, static,
                                                   static_ints, xp)
from mjax.numpy.index_update import _IndexUpdateHelper


def _jnp():
    return jnp


def _lax():
    return lax


# ---- identities and constants ---------------------------------------------------------------
@register("Identity", "Snapshot", "EnsureShape", "CheckNumerics", "CheckNumericsV2",
          "PreventGradient", "DebugIdentity", "DebugIdentityV2")
def _identity(ctx, node, x, *rest):
    return x


@register("IdentityN")
def _identity_n(ctx, node, *xs):
    return list(xs)


@register("NoOp", "Assert", "Print", "PrintV2")
def _no_op(ctx, node, *xs):
    return []


@register("StopGradient")
def _stop_gradient(ctx, node, x):
    return x if is_numpy(x) else _lax().stop_gradient(x)


@register("Const")
def _const(ctx, node):
    return np.asarray(node.attrs["value"])


@register("Placeholder")
def _placeholder(ctx, node):
    raise ValueError(f"tf2jax: the placeholder '{node.name}' {ctx.where} is not fed (it is "
                     f"neither an argument of the function nor a captured variable)")


@register("PlaceholderWithDefault")
def _placeholder_with_default(ctx, node, default):
    return default


@register("ZerosLike")
def _zeros_like(ctx, node, x):
    return xp(x).zeros_like(x)


@register("OnesLike")
def _ones_like(ctx, node, x):
    return xp(x).ones_like(x)


@register("Fill")
def _fill(ctx, node, dims, value):
    shape = static_ints(dims, "the shape of Fill")
    return xp(value).full(shape, value, dtype=np.dtype(value.dtype))


# ---- shapes ---------------------------------------------------------------------------------
@register("Shape")
def _shape(ctx, node, x):
    return np.asarray(shape_of(x), node.attrs.get("out_type", np.int32))


@register("ShapeN")
def _shape_n(ctx, node, *xs):
    return [np.asarray(shape_of(x), node.attrs.get("out_type", np.int32)) for x in xs]


@register("Size")
def _size(ctx, node, x):
    return np.asarray(int(np.prod(shape_of(x))), node.attrs.get("out_type", np.int32))


@register("Rank")
def _rank(ctx, node, x):
    return np.asarray(len(shape_of(x)), np.int32)


@register("BroadcastArgs")
def _broadcast_args(ctx, node, a, b):
    sa, sb = (static_ints(v, "the shapes of BroadcastArgs") for v in (a, b))
    return np.asarray(np.broadcast_shapes(sa, sb), np.asarray(a).dtype)


@register("BroadcastTo")
def _broadcast_to(ctx, node, x, shape):
    return xp(x).broadcast_to(x, static_ints(shape, "the shape of BroadcastTo"))


@register("Reshape")
def _reshape(ctx, node, x, shape):
    return xp(x).reshape(x, static_ints(shape, "the shape of Reshape"))


@register("Transpose")
def _transpose(ctx, node, x, perm):
    return xp(x).transpose(x, static_ints(perm, "the permutation of Transpose"))


@register("ExpandDims")
def _expand_dims(ctx, node, x, axis):
    (a,) = static_ints(axis, "the axis of ExpandDims")
    return xp(x).expand_dims(x, a)


@register("Squeeze")
def _squeeze(ctx, node, x):
    dims = tuple(node.attrs.get("squeeze_dims") or ())
    if not dims:
        dims = tuple(i for i, d in enumerate(shape_of(x)) if d == 1)
    return xp(x).squeeze(x, axis=dims) if dims else x


# ---- joining and splitting ------------------------------------------------------------------
@register("ConcatV2")
def _concat_v2(ctx, node, *args):
    *xs, axis = args
    (a,) = static_ints(axis, "the axis of ConcatV2")
    return xp(*xs).concatenate(list(xs), axis=a)


@register("Concat")
def _concat(ctx, node, axis, *xs):
    (a,) = static_ints(axis, "the axis of Concat")
    return xp(*xs).concatenate(list(xs), axis=a)


@register("Pack")
def _pack(ctx, node, *xs):
    return xp(*xs).stack(list(xs), axis=int(node.attrs.get("axis", 0)))


@register("Unpack")
def _unpack(ctx, node, x):
    m = xp(x)
    axis = int(node.attrs.get("axis", 0)) % len(shape_of(x))
    return [m.squeeze(p, axis=axis) for p in m.split(x, shape_of(x)[axis], axis=axis)]


@register("Split")
def _split(ctx, node, axis, x):
    (a,) = static_ints(axis, "the axis of Split")
    return list(xp(x).split(x, int(node.attrs["num_split"]), axis=a))


@register("SplitV")
def _split_v(ctx, node, x, sizes, axis):
    (a,) = static_ints(axis, "the axis of SplitV")
    sizes = list(static_ints(sizes, "the sizes of SplitV"))
    if -1 in sizes:
        i = sizes.index(-1)
        sizes[i] = shape_of(x)[a] - (sum(sizes) + 1)
    return list(xp(x).split(x, np.cumsum(sizes)[:-1].tolist(), axis=a))


@register("Tile")
def _tile(ctx, node, x, multiples):
    return xp(x).tile(x, static_ints(multiples, "the multiples of Tile"))


@register("ReverseV2")
def _reverse(ctx, node, x, axis):
    return xp(x).flip(x, axis=static_ints(axis, "the axes of ReverseV2"))


# ---- slicing --------------------------------------------------------------------------------
@register("StridedSlice")
def _strided_slice(ctx, node, x, begin, end, strides):
    b = static_ints(begin, "the begin of StridedSlice")
    e = static_ints(end, "the end of StridedSlice")
    s = static_ints(strides, "the strides of StridedSlice")
    a = node.attrs
    bm, em = a.get("begin_mask", 0), a.get("end_mask", 0)
    ellipsis, new_axis = a.get("ellipsis_mask", 0), a.get("new_axis_mask", 0)
    shrink = a.get("shrink_axis_mask", 0)
    index = []
    for i in range(len(b)):
        bit = 1 << i
        if ellipsis & bit:
            index.append(Ellipsis)
        elif new_axis & bit:
            index.append(None)
        elif shrink & bit:
            index.append(b[i])
        else:
            index.append(slice(None if bm & bit else b[i], None if em & bit else e[i],
                               s[i]))
    return x[tuple(index)]


@register("Slice")
def _slice(ctx, node, x, begin, size):
    shape = shape_of(x)
    sizes = static_ints(size, "the size of Slice")
    if is_numpy(begin):
        b = static_ints(begin, "the begin of Slice")
        sizes = [d - bi if n == -1 else n for d, bi, n in zip(shape, b, sizes)]
        return x[tuple(slice(bi, bi + n) for bi, n in zip(b, sizes))]
    if -1 in sizes:
        raise ValueError("tf2jax: Slice with a size of -1 needs a constant begin")
    starts = [begin[i] for i in range(len(shape))]
    return _lax().dynamic_slice(x, starts, sizes)


@register("Gather", "GatherV2")
def _gather(ctx, node, params, indices, axis=None):
    a = 0 if axis is None else static_ints(axis, "the axis of GatherV2")[0]
    a %= len(shape_of(params))
    b = int(node.attrs.get("batch_dims", 0)) % (len(shape_of(indices)) + 1)
    if b == 0:
        return xp(params, indices).take(params, indices, axis=a)

    def take(p, i):
        return _jnp().take(p, i, axis=a - b)
    for _ in range(b):           # the leading batch dimensions pair up: map over them
        take = vmap(take)
    return take(params, indices)


@register("GatherNd")
def _gather_nd(ctx, node, params, indices):
    k = shape_of(indices)[-1]
    return params[tuple(indices[..., i] for i in range(k))]


@register("OneHot")
def _one_hot(ctx, node, indices, depth, on, off):
    m = xp(indices, on, off)
    d = int(static(depth, "the depth of OneHot"))
    hot = m.expand_dims(indices, -1) == np.arange(d)
    out = m.where(hot, on, off)
    axis = int(node.attrs.get("axis", -1))
    return out if axis == -1 else m.moveaxis(out, -1, axis)


# ---- padding --------------------------------------------------------------------------------
def _pads(paddings):
    p = static(paddings, "the paddings").reshape(-1, 2)
    return [(int(lo), int(hi)) for lo, hi in p]


@register("Pad")
def _pad(ctx, node, x, paddings):
    return xp(x).pad(x, _pads(paddings))


@register("PadV2")
def _pad_v2(ctx, node, x, paddings, value):
    if not is_numpy(value):
        raise ValueError("tf2jax: PadV2 needs a constant padding value")
    return xp(x).pad(x, _pads(paddings), constant_values=np.asarray(value).item())


@register("MirrorPad")
def _mirror_pad(ctx, node, x, paddings):
    mode = {"REFLECT": "reflect", "SYMMETRIC": "symmetric"}[node.attrs["mode"]]
    return xp(x).pad(x, _pads(paddings), mode=mode)


# ---- TensorLists ----------------------------------------------------------------------------
def _element_shape(shape, node, ctx):
    dims = static_ints(shape, "the element shape of a TensorList") \
        if np.ndim(static(shape, "the element shape")) else None
    if dims is None or any(d < 0 for d in dims):
        raise UnsupportedOperationError(
            f"tf2jax: {node.op} with an unknown element shape {dims} (node '{node.name}' "
            f"{ctx.where}): TensorLists need static element shapes")
    return dims


class PendingList:
    """A reserved TensorList whose element shape TF left unknown (`tf.map_fn`): it
    becomes an array at its first `TensorListSetItem` (a While over it finds the shape
    by tracing its body once)."""

    def __init__(self, length: int, dtype, node_name: str):
        self.length, self.dtype, self.node_name = length, dtype, node_name

    def materialize(self, element_shape) -> np.ndarray:
        return np.zeros((self.length,) + tuple(element_shape), self.dtype)


def _known(lst, node, ctx):
    if isinstance(lst, PendingList):
        raise UnsupportedOperationError(
            f"tf2jax: {node.op} (node '{node.name}' {ctx.where}) reads the TensorList "
            f"reserved by '{lst.node_name}' before any element was set: its element shape "
            f"is unknown")
    return lst


@register("TensorListReserve")
def _tl_reserve(ctx, node, element_shape, num_elements):
    n = int(static(num_elements, "the length of a TensorList"))
    shape = static(element_shape, "the element shape of a TensorList")
    if shape.ndim == 0 or (shape < 0).any():
        return PendingList(n, node.attrs["element_dtype"], node.name)
    return np.zeros((n,) + _element_shape(element_shape, node, ctx),
                    node.attrs["element_dtype"])


@register("TensorListFromTensor")
def _tl_from_tensor(ctx, node, tensor, element_shape):
    return tensor


@register("TensorListStack")
def _tl_stack(ctx, node, lst, element_shape):
    return _known(lst, node, ctx)


@register("TensorListLength")
def _tl_length(ctx, node, lst):
    if isinstance(lst, PendingList):
        return np.asarray(lst.length, np.int32)
    return np.asarray(shape_of(lst)[0], np.int32)


@register("TensorListElementShape")
def _tl_element_shape(ctx, node, lst):
    lst = _known(lst, node, ctx)
    return np.asarray(shape_of(lst)[1:], node.attrs.get("shape_type", np.int32))


@register("TensorListGetItem")
def _tl_get_item(ctx, node, lst, index, element_shape):
    lst = _known(lst, node, ctx)
    if is_numpy(index):
        return lst[int(index)]
    return _lax().dynamic_index_in_dim(_jnp().asarray(lst), _index(index), 0,
                                       keepdims=False)


@register("TensorListSetItem")
def _tl_set_item(ctx, node, lst, index, item):
    if isinstance(lst, PendingList):
        lst = lst.materialize(shape_of(item))
    if is_numpy(lst) and is_numpy(index) and is_numpy(item):
        out = lst.copy()
        out[int(index)] = item
        return out
    jnp = _jnp()
    lst = jnp.asarray(lst)
    return _lax().dynamic_update_index_in_dim(lst, cast(item, lst.dtype), _index(index), 0)


def _index(i):
    """A run-time index in the default integer type (the other start indices' type)."""
    return cast(i, np.int64)


# ---- scatters and matrices ------------------------------------------------------------------
def _scatter(kind):
    def rule(ctx, node, x, indices, updates):
        jnp = _jnp()
        x = jnp.asarray(x)
        k = shape_of(indices)[-1]
        # Not `x.at`: a constant made while tracing (jnp.zeros under jit) lacks it.
        where = _IndexUpdateHelper(x)[tuple(jnp.asarray(indices)[..., i] for i in range(k))]
        return getattr(where, kind)(updates)
    return rule


register("TensorScatterUpdate")(_scatter("set"))
register("TensorScatterAdd")(_scatter("add"))
register("TensorScatterSub")(lambda ctx, node, x, i, u: _scatter("add")(ctx, node, x, i,
                                                                       -_jnp().asarray(u)))
register("TensorScatterMax")(_scatter("max"))
register("TensorScatterMin")(_scatter("min"))


@register("ScatterNd")
def _scatter_nd(ctx, node, indices, updates, shape):
    zeros = _jnp().zeros(static_ints(shape, "the shape of ScatterNd"),
                         np.dtype(updates.dtype))
    return _scatter("add")(ctx, node, zeros, indices, updates)


@register("MatrixBandPart")
def _band_part(ctx, node, x, lower, upper):
    lo, hi = (int(static(v, "the band of MatrixBandPart")) for v in (lower, upper))
    r, c = shape_of(x)[-2:]
    i, j = np.arange(r)[:, None], np.arange(c)[None, :]
    keep = ((lo < 0) | (i - j <= lo)) & ((hi < 0) | (j - i <= hi))
    m = xp(x)
    return m.where(keep, x, m.zeros_like(x))


# ---- space and depth ------------------------------------------------------------------------
@register("SpaceToBatchND")
def _space_to_batch(ctx, node, x, block_shape, paddings):
    m = xp(x)
    blocks = static_ints(block_shape, "the block shape")
    k = len(blocks)
    x = m.pad(x, [(0, 0)] + _pads(paddings) + [(0, 0)] * (len(shape_of(x)) - 1 - k))
    shape = shape_of(x)
    b, spatial, rest = shape[0], shape[1:1 + k], shape[1 + k:]
    split = [b]
    for s, bl in zip(spatial, blocks):
        split += [s // bl, bl]
    x = m.reshape(x, split + list(rest))
    perm = ([2 + 2 * i for i in range(k)] + [0] + [1 + 2 * i for i in range(k)]
            + list(range(1 + 2 * k, 1 + 2 * k + len(rest))))
    x = m.transpose(x, perm)
    return m.reshape(x, [b * int(np.prod(blocks))] + [s // bl for s, bl in
                                                      zip(spatial, blocks)] + list(rest))


@register("BatchToSpaceND")
def _batch_to_space(ctx, node, x, block_shape, crops):
    m = xp(x)
    blocks = static_ints(block_shape, "the block shape")
    k = len(blocks)
    shape = shape_of(x)
    b = shape[0] // int(np.prod(blocks))
    spatial, rest = shape[1:1 + k], shape[1 + k:]
    x = m.reshape(x, list(blocks) + [b] + list(spatial) + list(rest))
    perm = [k]
    for i in range(k):
        perm += [k + 1 + i, i]
    perm += list(range(2 * k + 1, 2 * k + 1 + len(rest)))
    x = m.reshape(m.transpose(x, perm),
                  [b] + [s * bl for s, bl in zip(spatial, blocks)] + list(rest))
    c = _pads(crops)
    return x[(slice(None),) + tuple(slice(lo, x.shape[1 + i] - hi)
                                    for i, (lo, hi) in enumerate(c))]


def _nhwc(node, ctx):
    if node.attrs.get("data_format", "NHWC") != "NHWC":
        raise UnsupportedOperationError(f"tf2jax: {node.op} in data format "
                                        f"{node.attrs.get('data_format')} (node "
                                        f"'{node.name}' {ctx.where}): NHWC only")


@register("SpaceToDepth")
def _space_to_depth(ctx, node, x):
    _nhwc(node, ctx)
    m, bl = xp(x), int(node.attrs["block_size"])
    n, h, w, c = shape_of(x)
    x = m.reshape(x, (n, h // bl, bl, w // bl, bl, c))
    return m.reshape(m.transpose(x, (0, 1, 3, 2, 4, 5)), (n, h // bl, w // bl, bl * bl * c))


@register("DepthToSpace")
def _depth_to_space(ctx, node, x):
    _nhwc(node, ctx)
    m, bl = xp(x), int(node.attrs["block_size"])
    n, h, w, c = shape_of(x)
    x = m.reshape(x, (n, h, w, bl, bl, c // (bl * bl)))
    return m.reshape(m.transpose(x, (0, 1, 3, 2, 4, 5)), (n, h * bl, w * bl, c // (bl * bl)))


@register("ReverseSequence")
def _reverse_sequence(ctx, node, x, lengths):
    """Reverses the first lengths[b] entries along seq_dim of each batch entry b."""
    jnp = _jnp()
    x = jnp.asarray(x)
    seq, batch = int(node.attrs["seq_dim"]), int(node.attrs.get("batch_dim", 0))
    t = np.arange(x.shape[seq])
    shape = [1] * x.ndim
    shape[seq] = x.shape[seq]
    t = t.reshape(shape)
    lshape = [1] * x.ndim
    lshape[batch] = x.shape[batch]
    n = jnp.asarray(lengths).astype(np.int32).reshape(lshape)
    src = jnp.where(t < n, n - 1 - t, t)
    src = jnp.broadcast_to(src, x.shape)
    return jnp.take_along_axis(x, src, axis=seq)


# ---- data-dependent shapes ------------------------------------------------------------------
def _concrete(x, node, ctx) -> np.ndarray:
    """The value of `x` when it is known (eager calls); traced values have no shape yet."""
    if isinstance(x, Tracer):
        raise UnsupportedOperationError(
            f"tf2jax: {node.op} (node '{node.name}' {ctx.where}) has a result whose shape "
            f"depends on the input's values; it converts only when the input is known "
            f"(an eager call), not under jit/grad/vmap")
    return np.asarray(x)


@register("Where")
def _where(ctx, node, x):
    return np.argwhere(_concrete(x, node, ctx)).astype(np.int64)


@register("Unique")
def _unique(ctx, node, x):
    values, idx = np.unique(_concrete(x, node, ctx), return_inverse=True)
    # TF orders unique values by first occurrence, NumPy by value.
    first = np.array([np.flatnonzero(idx == i)[0] for i in range(len(values))])
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return values[order], rank[idx].astype(node.attrs.get("out_idx", np.int32))
