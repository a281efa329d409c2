"""Arrays unreduced over mesh axes: each device along those axes holds a partial sum.

JAX's `NamedSharding(mesh, P(..., unreduced={'X'}))` lays out a value whose devices
along X hold partial sums of it (their sum is the value); `P(..., reduced={'X'})` a
replicated value whose cotangent will be such. mjax keeps an unreduced array as one
multi-device buffer laid out as if replicated along the unreduced axes, each device's
buffer its own partial. Eagerly (outside any trace) it runs:

- `device_put(x, P(..., unreduced=U))`: x split into partials as XLA splits them (each
  member of U keeps its own slice of a dimension x was split along over U, zeros
  elsewhere; otherwise the first member holds the value and the others zeros);
- `reshard(u, s)` to a sharding without unreduced axes: the sum over U (an all-reduce,
  a reduce_sum of the partials stacked along a new dimension split over U);
- a dot_general whose contracting dimensions are split over U (`out_sharding=P(...,
  unreduced=U)`): each device contracts its own blocks, with no reduction;
- by JAX's unreduced rules, per device: add of arrays unreduced alike, mul by an array
  reduced over the axes, reduce_sum, casts, and structural ops of unsplit blocks.

Other ops on unreduced arrays raise JAX's NotImplementedError. Inside traces the axes
are types (sharding_types.py) and Shardy layouts (docs/design.md), not values.
"""
from __future__ import annotations

import contextlib
import math
import threading

import numpy as np

from mjax.tracing import registration
from mjax.arrays.array import Array
from mjax.config import config
from mjax.tracing.core import bind
from mjax.dialect import ShapedArray
from mjax.dialect.ops import structural as S
from mjax.dialect.ops.reductions import ReduceSumOp
from mjax.dialect.ops.structural import DotGeneralOp
from mjax.specs.dtypes import aval_of_value, to_numpy
from mjax.arrays.placement import _process_of, device_put, process_index
from mjax.passes.rules.tables import PARTIAL_SUMS, PRODUCT, SUM
from mjax.runtime import get_backend
from mjax.runtime.backend import buffer_to_numpy
from mjax.specs.sharding_impls import NamedSharding, PartitionSpec
from mjax.arrays.sharding_types import (ShardingTypeError, check_add_unreduced, check_mul_unreduced,
                                        spec_entry, typeof_array)

_ISSUE = "Please file an issue at https://github.com/jax-ml/jax/issues"

# Which ops act on each device's partial alone is tables.PARTIAL_SUMS. Of its per-partial
# ops this eager path runs the casts, which keep every device's block, reduce_sum and
# the structural ops below on unsplit blocks; the sums and products need operands laid
# out alike. (JAX 0.10.2 has no unreduced rule for sub or neg: they raise as there.)
_CASTS = (S.CopyOp, S.ConvertElementTypeOp)
_STRUCTURAL = (S.TransposeOp, S.ReshapeOp, S.BroadcastInDimOp, S.SqueezeOp, S.ExpandDimsOp,
               S.RevOp)


def unreduced_of(sharding) -> frozenset:
    """The mesh axes over which an array laid out as `sharding` holds partial sums."""
    if isinstance(sharding, NamedSharding):
        return frozenset(a for a in sharding.spec.unreduced if sharding.mesh.shape[a] > 1)
    return frozenset()


def is_unreduced(x) -> bool:
    return type(x) is Array and bool(unreduced_of(x._sharding))


def _positional(sharding, ndim: int) -> list:
    return [sharding.spec.axes_of(d) for d in range(ndim)]


def without_reduced(sharding):
    """`sharding` (a NamedSharding or a PartitionSpec) without its reduced axes (the same
    buffers: a replicated value)."""
    if isinstance(sharding, PartitionSpec) and sharding.reduced:
        return PartitionSpec(*sharding, unreduced=sharding.unreduced)
    if isinstance(sharding, NamedSharding) and sharding.spec.reduced:
        return NamedSharding(sharding.mesh, without_reduced(sharding.spec))
    return sharding


def _member_index(sharding, axes) -> tuple[dict, int]:
    """{device: its index along the (mesh-ordered) `axes`}, and their total size."""
    mesh = sharding.mesh
    names = list(mesh.axis_names)
    sizes = list(mesh.axis_sizes)
    order = [names.index(a) for a in names if a in axes]
    out = {}
    for pos in np.ndindex(*sizes):
        k = 0
        for i in order:
            k = k * sizes[i] + pos[i]
        out[mesh.devices[pos]] = k
    return out, math.prod(sizes[i] for i in order)


def _local_devices(sharding) -> list:
    me = process_index()
    return [d for d in sharding._device_list() if _process_of(d) == me]


def partials(x) -> dict:
    """{device: its buffer as a NumPy array} of a multi-device array."""
    backend = get_backend()
    return {dev: buffer_to_numpy(buf, x.aval.dtype) for dev, buf in backend.shards(x._buf)}


def _buffers(x) -> dict:
    if x._sharding is None or x._sharding.num_devices == 1:
        return None
    return dict(get_backend().shards(x._buf))


def from_partials(parts: dict, shape, dtype, sharding, weak_type: bool = False) -> Array:
    """An array laid out as `sharding` whose device d's buffer is parts[d]."""
    devs = _local_devices(sharding)
    backend = get_backend()
    if not hasattr(backend, "put_per_device"):
        raise NotImplementedError(f"unreduced arrays on the {backend.name} backend")
    buf = backend.put_per_device([np.asarray(parts[d], dtype) for d in devs], devs,
                                    sharding._device_list(), sharding.hlo_sharding(len(shape)),
                                    tuple(shape), np.dtype(dtype))
    return Array(buf, ShapedArray(tuple(shape), dtype, weak_type), sharding)


def sum_of_partials(x) -> np.ndarray:
    """The value of an unreduced array (on the host): its partials summed."""
    sharding = x._sharding
    index = sharding.devices_indices_map(x.shape)
    member, _ = _member_index(sharding, unreduced_of(sharding))
    out = np.zeros(x.shape, x.dtype)
    seen = set()
    for dev, value in partials(x).items():
        key = (tuple((s.start, s.stop) for s in index[dev]), member[dev])
        if key not in seen:
            seen.add(key)
            out[index[dev]] += value
    return out


def _split_dim(leaf, sharding):
    """The dimension that `leaf`'s own layout splits over exactly the unreduced axes of
    `sharding` (which leaves it whole), or None."""
    src = getattr(leaf, "_sharding", None)
    if not isinstance(src, NamedSharding) or src.mesh != sharding.mesh:
        return None
    order = tuple(a for a in sharding.mesh.axis_names if a in unreduced_of(sharding))
    for d in range(len(leaf.shape)):
        if src.spec.axes_of(d) == order and not sharding.spec.axes_of(d):
            return d
    return None


def split_value(value: np.ndarray, aval, sharding, dim=None) -> Array:
    """A host value put as `sharding` (unreduced over U), as XLA does it: with `dim` (a
    dimension the source split over U) member k of U keeps the k-th slice of its block
    along it and zeros elsewhere, with no communication; otherwise member 0 of U holds
    the block and the others zeros. Either way the partials sum to the value."""
    axes = unreduced_of(sharding)
    member, n = _member_index(sharding, axes)
    index = sharding.devices_indices_map(value.shape)
    parts = {}
    for dev in _local_devices(sharding):
        block = np.asarray(value[index[dev]])
        k = member[dev]
        part = np.zeros_like(block)
        if dim is None:
            if k == 0:
                part[...] = block
        else:
            m = value.shape[dim] // n
            sl = (slice(None),) * dim + (slice(k * m, (k + 1) * m),)
            part[sl] = block[sl]
        parts[dev] = part
    return from_partials(parts, value.shape, aval.dtype, sharding, aval.weak_type)


def _stacked(x) -> Array:
    """The partials of an unreduced array stacked along a new leading dimension split
    over its unreduced axes: summing that dimension away is the all-reduce."""
    sharding = x._sharding
    axes = unreduced_of(sharding)
    _, n = _member_index(sharding, axes)
    order = tuple(a for a in sharding.mesh.axis_names if a in axes)
    spec = PartitionSpec(spec_entry(order),
                         *[spec_entry(a) for a in _positional(sharding, x.ndim)])
    stacked = NamedSharding(sharding.mesh, spec)
    parts = {d: v[None] for d, v in partials(x).items()}
    return from_partials(parts, (n, *x.shape), x.dtype, stacked)


def all_reduce(x, target) -> Array:
    """The unreduced array `x` summed over its unreduced axes, laid out as `target`."""
    if target.mesh != x._sharding.mesh:
        raise NotImplementedError(f"reshard of an array unreduced over mesh "
                                  f"{x._sharding.mesh} to a sharding over another mesh")
    total = bind(ReduceSumOp, _stacked(x), axes=(0,))
    total.aval = ShapedArray(x.shape, x.dtype, x.aval.weak_type)
    return device_put(total, target)


def device_put_unreduced(leaf, target) -> Array:
    """device_put (and eager reshard) where the source or the target is unreduced."""
    if is_unreduced(leaf):
        if leaf._sharding == target:
            return leaf
        if unreduced_of(target):
            raise NotImplementedError(
                f"reshard from {leaf._sharding.spec!r} to {target.spec!r}: mjax reshards "
                f"an unreduced array only to a sharding without unreduced axes (their "
                f"sum)")
        return all_reduce(leaf, target)
    aval = aval_of_value(leaf)
    value = np.asarray(to_numpy(leaf), dtype=aval.dtype)
    return split_value(value, aval, target, _split_dim(leaf, target))


# ---- contractions without the reduction ----------------------------------------------
_local = threading.local()


@contextlib.contextmanager
def local_contractions():
    """Within the block, eager dot_generals whose contracting dimensions are split over
    mesh axes leave the sum over those axes undone (an unreduced result)."""
    depth = getattr(_local, "depth", 0)
    _local.depth = depth + 1
    try:
        yield
    finally:
        _local.depth = depth


def local_contractions_on() -> bool:
    return getattr(_local, "depth", 0) > 0


def local_dot_general(lhs, rhs, dn, precision, pet):
    """dot_general of two arrays over one mesh, each device contracting its own blocks:
    unreduced over the mesh axes splitting the contracting dimensions. None when no
    contracting dimension is split (the caller computes the value as usual)."""
    if is_unreduced(lhs) or is_unreduced(rhs):
        raise NotImplementedError(f"unreduced rule for dot_general is not implemented. "
                                  f"{_ISSUE}")
    sl = getattr(lhs, "_sharding", None)
    sr = getattr(rhs, "_sharding", None)
    if not (type(lhs) is Array and type(rhs) is Array and isinstance(sl, NamedSharding)
            and isinstance(sr, NamedSharding)):
        return None
    (lc, rc), (lb, rb) = dn
    ld, rd = _positional(sl, lhs.ndim), _positional(sr, rhs.ndim)
    axes = set()
    for i, j in zip(lc, rc):
        if ld[i] != rd[j]:
            raise NotImplementedError(
                f"dot_general with an unreduced out_sharding whose contracting "
                f"dimensions are split differently ({ld[i]} and {rd[j]})")
        axes |= set(ld[i])
    if not axes:
        return None
    if sl.mesh != sr.mesh:
        raise NotImplementedError("dot_general with an unreduced out_sharding of arrays "
                                  "over different meshes")
    for i, j in zip(lb, rb):
        if ld[i] != rd[j]:
            raise NotImplementedError(
                f"dot_general with an unreduced out_sharding whose batch dimensions are "
                f"split differently ({ld[i]} and {rd[j]})")
    free_l = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    free_r = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    out_dims = [ld[i] for i in lb] + [ld[d] for d in free_l] + [rd[d] for d in free_r]
    used = [a for dims in out_dims for a in dims]
    if len(set(used)) != len(used):
        raise NotImplementedError("dot_general with an unreduced out_sharding whose "
                                  "result would split two dimensions over one mesh axis")
    order = tuple(a for a in sl.mesh.axis_names if a in axes)
    spec = PartitionSpec(*[spec_entry(d) for d in out_dims], unreduced=frozenset(order))
    out_sharding = NamedSharding(sl.mesh, spec)
    lbufs, rbufs = _buffers(lhs), _buffers(rhs)
    lshape, rshape = sl.shard_shape(lhs.shape), sr.shard_shape(rhs.shape)
    parts, out = {}, None
    for dev in _local_devices(out_sharding):
        lblock = Array(lbufs[dev], ShapedArray(lshape, lhs.dtype))
        rblock = Array(rbufs[dev], ShapedArray(rshape, rhs.dtype))
        with config.override(jax_default_device=dev):   # (each on its own device)
            out = bind(DotGeneralOp, lblock, rblock, dimension_numbers=dn,
                       precision=precision, preferred_element_type=pet)
        parts[dev] = np.asarray(out)
    shape = tuple([lhs.shape[i] for i in lb] + [lhs.shape[d] for d in free_l] +
                  [rhs.shape[d] for d in free_r])
    return from_partials(parts, shape, out.dtype, out_sharding)


# ---- other eager ops on unreduced arrays ----------------------------------------------
def keep_reduced(args, outs):
    """JAX's reduced rule for an op on arrays all reduced over the same mesh axes: the
    results are too (the same replicated buffers, typed {R:...})."""
    arrays = [x for x in args if type(x) is Array and x._sharding is not None]
    reduced = {_reduced_of(x) for x in arrays}   # (not scalars on the default device)
    if len(reduced) != 1 or not next(iter(reduced)):
        return outs
    axes = next(iter(reduced))
    mesh = arrays[0]._sharding.mesh
    for y in outs if isinstance(outs, (list, tuple)) else [outs]:
        s = getattr(y, "_sharding", None)
        if type(y) is Array and isinstance(s, NamedSharding) and s.mesh == mesh and \
                not (axes & {a for d in range(y.ndim) for a in s.spec.axes_of(d)}):
            y._sharding = NamedSharding(mesh, PartitionSpec(*s.spec, reduced=axes))
    return outs


def _reduced_of(x) -> frozenset:
    sharding = getattr(x, "_sharding", None)
    if isinstance(sharding, NamedSharding):
        return frozenset(a for a in sharding.spec.reduced if sharding.mesh.shape[a] > 1)
    return frozenset()


def _type_text(x) -> str:
    return str(typeof_array(x))


def apply_unreduced(opcls, args, params):
    """An eager op with an unreduced operand, by JAX's unreduced rules: per device where
    the op is linear in it (add of alike unreduced arrays, mul by a value reduced over
    the axes, reduce_sum, casts, structural ops of unsplit blocks); JAX's errors
    otherwise."""
    name = opcls.primitive
    first = next(x for x in args if is_unreduced(x))
    sharding = first._sharding
    positional = _positional(sharding, first.ndim)
    out_positional = positional
    kind = PARTIAL_SUMS.get(opcls)
    if kind == SUM:
        check_add_unreduced(name, *(unreduced_of(getattr(a, "_sharding", None))
                                    for a in args))
    elif kind == PRODUCT:
        x, y = args
        check_mul_unreduced(unreduced_of(getattr(x, "_sharding", None)), _reduced_of(x),
                            unreduced_of(getattr(y, "_sharding", None)), _reduced_of(y),
                            lambda: _type_text(x), lambda: _type_text(y))
    if kind in (SUM, PRODUCT):
        for x in args:
            if not (type(x) is Array and isinstance(x._sharding, NamedSharding) and
                    x._sharding.mesh == sharding.mesh and x.shape == first.shape and
                    _positional(x._sharding, x.ndim) == positional):
                raise NotImplementedError(f"{name} of an unreduced array and an operand "
                                          f"of another shape or layout")
    elif opcls is ReduceSumOp:
        axes = set(params["axes"])
        if any(positional[d] for d in axes):
            raise NotImplementedError("reduce_sum of an unreduced array over dimensions "
                                      "also split over mesh axes")
        out_positional = [p for d, p in enumerate(positional) if d not in axes]
    elif opcls in _STRUCTURAL:
        if any(positional):
            raise NotImplementedError(f"unreduced rule for {name} of an array also split "
                                      f"along its dimensions is not implemented")
        out_positional = None
    elif opcls not in _CASTS:
        raise NotImplementedError(f"unreduced rule for {name} is not implemented. {_ISSUE}")
    bufs = [_buffers(x) for x in args]
    parts, out = {}, None
    for dev in _local_devices(sharding):
        blocks = [Array(b[dev], ShapedArray(x._sharding.shard_shape(x.shape), x.dtype,
                                            x.aval.weak_type))
                  for b, x in zip(bufs, args)]
        with config.override(jax_default_device=dev):
            out = bind(opcls, *blocks, **params)
        parts[dev] = np.asarray(out)
    if out_positional is None:
        out_positional = [()] * out.ndim
    spec = PartitionSpec(*[spec_entry(a) for a in out_positional],
                         unreduced=sharding.spec.unreduced)
    out_sharding = NamedSharding(sharding.mesh, spec)
    shape = tuple(n * math.prod(sharding.mesh.shape[a] for a in axes)
                  for n, axes in zip(out.shape, out_positional))
    return [from_partials(parts, shape, out.dtype, out_sharding, out.aval.weak_type)]


registration.SUM_OF_PARTIALS.fill(sum_of_partials)
registration.DEVICE_PUT_UNREDUCED.fill(device_put_unreduced)

__all__ = ["keep_reduced", "is_unreduced", "unreduced_of", "device_put_unreduced",
           "local_dot_general", "apply_unreduced", "local_contractions", "sum_of_partials",
           "without_reduced"]
