"""Scoped buffers, semaphores and DMAs in Pallas kernels: `pl.run_scoped`,
`pl.semaphore_signal/wait/read` and the TPU's `make_async_copy` family.

They emit the ops of dialect/ops/pallas_tpu.py (`jaxpr.run_scoped`, `jaxpr.dma_start`,
`jaxpr.dma_wait`, `jaxpr.semaphore_*`). Interpret mode runs a DMA as a copy and keeps a
semaphore as an i32 counter. JAX: pallas/primitives.py (run_scoped, semaphores) and
pallas/mosaic/primitives.py (AsyncCopyDescriptor).
"""
from __future__ import annotations

import dataclasses
import enum

import numpy as np

from mjax import lax
from mjax.base import trace_trees, tree_util
from mjax.tracing.axis_env import AXIS_ENV
from mjax.tracing.core import (aval_of_value, bind, current_trace, emit_region_op,
                               trace_region)
from mjax.dialect import ShapedArray
from mjax.dialect.attributes import dense_elements
from mjax.dialect.ops import pallas_tpu as P
from mjax.dialect.ops.structural import ConstantOp
from mjax.experimental.pallas.pallas_call import (_is_scratch_leaf, _scratch_aval,
                                                  _scratch_space)
from mjax.experimental.pallas.primitives import current_kernel
from mjax.experimental.pallas.ref import (Ref, ReshapedRef, _as_i32, as_ref,
                                          bitcast_view_shape)
from mjax.experimental.pallas.selection import SelectedRef, each_selected, no_selection
from mjax.experimental.pallas.tpu_cores import int32_scalar as _i32, split_core_axes


class DeviceIdType(enum.Enum):
    """How a remote device is named: by its mesh coordinates or its logical id.
    JAX: pl.DeviceIdType."""
    MESH = "mesh"
    LOGICAL = "logical"


def _device_id_operands(device_id, device_id_type, what: str) -> tuple[list, dict]:
    """(the i32 operands naming a device, the op's attributes): its coordinates along
    each axis of the shard_map mesh the kernel is traced in (MESH; a dict names some
    axes, the others are this device's), or its logical id (LOGICAL). JAX:
    pallas.primitives.device_id_to_logical (whose sum it leaves to the lowering)."""
    if getattr(current_kernel(what), "interpret", False) and not AXIS_ENV.meshes:
        # (inside a shard_map every device's instance is interpreted together)
        raise NotImplementedError(
            f"{what} to another device in interpret mode (interpret=True or "
            f"pltpu.InterpretParams) outside a shard_map is not supported by mjax: "
            f"interpret mode runs the devices' kernel instances together only for a "
            f"pallas_call inside the shard_map whose mesh names them")
    kind = DeviceIdType(device_id_type.value if isinstance(device_id_type, DeviceIdType)
                        else device_id_type)
    mesh = AXIS_ENV.meshes[-1] if AXIS_ENV.meshes else ((), ())
    if isinstance(device_id, dict):
        if kind is not DeviceIdType.MESH:
            raise ValueError(f"`device_id_type` must be MESH if `device_id` is a dict, "
                             f"got: device_id_type = {kind}.")
        unknown = [a for a in device_id if a not in mesh[0]]
        if unknown:
            raise NotImplementedError(f"{what}: device_id names axes {unknown} that are "
                                      f"not axes of the shard_map mesh {mesh[0]} (core "
                                      f"axes are not supported by mjax)")
        device_id = tuple(device_id[a] if a in device_id else lax.axis_index(a)
                          for a in mesh[0])
    ids = list(device_id) if isinstance(device_id, (tuple, list)) else [device_id]
    if kind is DeviceIdType.LOGICAL and len(ids) != 1:
        raise ValueError(f"{what}: a LOGICAL device_id is one integer, got {device_id!r}")
    if kind is DeviceIdType.MESH and len(ids) != len(mesh[0]):
        raise ValueError(f"Number of device ids must match the number of mesh axes, but "
                         f"got {len(ids)} ids for a {len(mesh[0])}D mesh.")
    return ([_i32(f"{what} device_id", v) for v in ids],
            {"device_ids": len(ids), "device_id_type": kind.value})


# ---- run_scoped ------------------------------------------------------------------------
def run_scoped(f, *types, collective_axes=(), **kw_types):
    """Calls `f` with fresh refs of `types` (pltpu.VMEM(...), pltpu.SemaphoreType.DMA,
    ...; keyword types become keyword refs) that live only during the call; returns what
    `f` returns. JAX: pl.run_scoped."""
    ctx = current_kernel("run_scoped")
    if collective_axes:
        raise NotImplementedError("run_scoped(collective_axes=...) (buffers shared by the "
                                  "cores of a mesh) is not supported by mjax's Pallas")
    leaves, tree = trace_trees.tree_flatten((types, kw_types), is_leaf=_is_scratch_leaf)
    avals = [_scratch_aval(t) for t in leaves]
    spaces = tuple(_scratch_space(t) for t in leaves)
    ip = ctx.interpret_params
    if ip is not None and not ip.allow_hbm_allocation_in_run_scoped and \
            any(sp in ("hbm", "any") for sp in spaces):
        # (JAX's TPU interpreter, unless allowed: the chip's cores share such a buffer)
        raise ValueError("Cannot allocate HBM in `run_scoped`.")

    def body(*tracers):
        ctx.note_memory_spaces(tracers, spaces)
        args, kwargs = tree_util.tree_unflatten(tree, [Ref(t) for t in tracers])
        return f(*args, **kwargs)

    region, out_avals, out_tree = trace_region(body, avals)
    consts = list(region.captured)
    params = {"scratch_shapes": avals}
    if any(sp != "vmem" for sp in spaces):
        params["scratch_memory_spaces"] = spaces
    if ctx.interpret_params is not None:
        params["uninitialized_memory"] = ctx.interpret_params.uninitialized_memory
    outs = emit_region_op(P.RunScopedOp, consts, params, [region], [consts], out_avals)
    return tree_util.tree_unflatten(out_tree, outs)


# ---- semaphores -------------------------------------------------------------------------
def _one_semaphore(sem, what: str) -> tuple[Ref, list]:
    """The ref and the index of the one semaphore `sem` (a ref or `.at[i]` view) names."""
    ref = as_ref(sem, what)
    if np.dtype(ref.dtype) != np.int32:
        raise TypeError(f"{what} expects a semaphore (a pltpu.SemaphoreType scratch "
                        f"buffer), got {ref!r}")
    if ref.shape != ():
        raise ValueError(f"{what} needs one semaphore, got an array of semaphores of "
                         f"shape {ref.shape}; pick one with .at[i]")
    return ref, [_as_i32(s) for s, _, _ in ref.index]


def _semaphore_view(sem, what: str) -> tuple[Ref, list, dict]:
    """(ref, starts, params) of a semaphore op's operand: a view made by chained
    `.at[...]`s window by window (as JAX slices once per `.at`), else one index."""
    ref, idx = _one_semaphore(no_selection(sem, what), what)
    if len(ref.views) <= 1:
        return ref, idx, {}
    starts, params, _ = ref.view_args()
    return ref, starts, params


def semaphore_signal(sem_or_view, inc=1, *, device_id=None,
                     device_id_type=DeviceIdType.MESH, core_index=None) -> None:
    """Adds `inc` to a semaphore, of the device `device_id` names when given (see
    make_async_remote_copy), of the core `core_index` (or device_id's core axis) names
    (tpu_cores.py). JAX: pl.semaphore_signal."""
    ref, idx, params = _semaphore_view(sem_or_view, "semaphore_signal")
    inc = _i32("semaphore_signal inc", inc)
    device_id, core = split_core_axes(device_id, core_index, "semaphore_signal")
    ids = []
    if device_id is not None:
        ids, remote = _device_id_operands(device_id, device_id_type, "semaphore_signal")
        params.update(remote)
    if core is not None:
        ids, params["core_ids"] = [*ids, core], 1
    bind(P.SemaphoreSignalOp, ref.tracer, inc, *idx, *ids, **params)


def semaphore_wait(sem_or_view, value=1, *, decrement: bool = True) -> None:
    """Waits until a semaphore holds `value`, then subtracts it (with `decrement`).
    JAX: pl.semaphore_wait."""
    ref, idx, params = _semaphore_view(sem_or_view, "semaphore_wait")
    bind(P.SemaphoreWaitOp, ref.tracer, _i32("semaphore_wait value", value), *idx,
         decrement=bool(decrement), **params)


def semaphore_read(sem_or_view):
    """A semaphore's current count (an int32 scalar). JAX: pl.semaphore_read."""
    ref, idx, params = _semaphore_view(sem_or_view, "semaphore_read")
    return bind(P.SemaphoreReadOp, ref.tracer, *idx, **params)


# ---- DMAs -------------------------------------------------------------------------------
def _same_shape(a, b) -> bool:
    """Whether two views' shapes are one: static sizes equal, traced sizes at the same
    places (their values are known only when the kernel runs)."""
    return len(a) == len(b) and all(
        (isinstance(x, (int, np.integer)) and isinstance(y, (int, np.integer)) and x == y)
        or (not isinstance(x, (int, np.integer)) and not isinstance(y, (int, np.integer)))
        for x, y in zip(a, b))


def _dma_ref(x, what: str):
    """A DMA's end: a ref, a view of one, a reshaped/bitcast view (ReshapedRef), or a
    pl.select_ref of them."""
    if isinstance(x, SelectedRef):
        for o in x.options:
            _dma_ref(o, what)
        return x
    return x if isinstance(x, ReshapedRef) else as_ref(x, what)


def _dma_semaphore(sem, what: str) -> None:
    """Checks a DMA's semaphore: one semaphore, or a pl.select_ref of them."""
    if isinstance(sem, SelectedRef):
        for o in sem.options:
            _dma_semaphore(o, what)
    else:
        _one_semaphore(sem, what)


def _dma_view(v) -> tuple:
    """(buffer tracer, starts, params, dynamic sizes) of a DMA's end, as its op names it:
    a ref's windows (Ref.view_args), or a reshaped/bitcast view's: the windows of the ref
    it views, then `view_at` (their count), `reshape`/`bitcast`, then its own window (the
    whole view where it took none). JAX: a TransformedRef's RefReshaper/RefBitcaster
    between its NDIndexers."""
    if isinstance(v, Ref):
        return (v.tracer,) + tuple(v.view_args())
    base = v.ref
    if base.is_dynamic_size:
        raise NotImplementedError(f"a DMA of {v!r}: a reshaped or bitcast view of a "
                                  f"window of traced size is not supported by mjax")
    view = base.shape if v.reshape_to is None else v.reshape_to
    if v.cast is not None:
        view = bitcast_view_shape(view, base.dtype, v.cast)
    window = v.window if v.window is not None else [(0, n, False) for n in view]
    starts, sizes, squeezed, levels = [], [], [], []
    for level in list(base.views) + [window]:
        levels.append(len(level))
        for start, size, sq in level:
            if sq:
                squeezed.append(len(sizes))
            starts.append(_as_i32(start))
            sizes.append(int(size))
    params = {"sizes": tuple(sizes), "squeezed": tuple(squeezed), "levels": tuple(levels),
              "view_at": len(base.views)}
    if v.reshape_to is not None:
        params["reshape"] = tuple(v.reshape_to)
    if v.cast is not None:
        params["bitcast"] = np.dtype(v.cast)
    return base.tracer, starts, params, []


class _OneDmaSemaphore:
    """A scratch spec of one DMA semaphore (pltpu.SemaphoreType.DMA, which is above)."""
    mjax_semaphore_space = "dma_semaphore"


_ONE_DMA_SEMAPHORE = _OneDmaSemaphore()


@dataclasses.dataclass
class AsyncCopyDescriptor:
    """A DMA from `src_ref` to `dst_ref` signalling `dst_sem` (and `src_sem`): `.start()`
    issues it, `.wait()` waits for it. JAX: pltpu's AsyncCopyDescriptor."""
    src_ref: Ref
    dst_ref: Ref
    dst_sem: Ref
    src_sem: Ref | None = None
    device_id: object = None
    device_id_type: DeviceIdType = DeviceIdType.MESH
    add: bool = False

    def __post_init__(self):
        self.src_ref = _dma_ref(self.src_ref, "make_async_copy source")
        self.dst_ref = _dma_ref(self.dst_ref, "make_async_copy destination")
        if not _same_shape(self.src_ref.shape, self.dst_ref.shape) or np.dtype(
                self.src_ref.dtype) != np.dtype(self.dst_ref.dtype):
            raise ValueError(f"make_async_copy copies {self.src_ref!r} into "
                             f"{self.dst_ref!r}; the source and destination must have "
                             f"the same shape and dtype")
        _dma_semaphore(self.dst_sem, "make_async_copy semaphore")
        if self.src_sem is not None:
            _dma_semaphore(self.src_sem, "make_async_copy source semaphore")

    @property
    def is_remote(self) -> bool:
        return self.device_id is not None

    def _remote(self, what: str) -> tuple[list, dict]:
        if not self.is_remote:
            return [], {}
        device_id, core = split_core_axes(self.device_id, None, what)
        ids, remote = ([], {}) if device_id is None else _device_id_operands(
            device_id, self.device_id_type, what)
        if core is not None:                # (another core of the chip: tpu_cores.py)
            ids, remote = [*ids, core], {**remote, "core_ids": 1}
        return ids, remote

    def start(self, priority: int = 0) -> None:
        # (a pl.select_ref end: one DMA per option, under conds on its index, as JAX)
        _each_selected((self.src_ref, self.dst_ref, self.dst_sem, self.src_sem),
                       lambda *ends: self._start(*ends, priority=priority))

    def _start(self, src_ref, dst_ref, dst_sem, src_sem, priority) -> None:
        ids, remote = self._remote("make_async_remote_copy")
        src_t, src_starts, src, src_dyn = _dma_view(src_ref)
        dst_t, dst_starts, dst, dst_dyn = _dma_view(dst_ref)
        sems = [_semaphore_view(dst_sem, "dma_start")]
        if src_sem is not None:
            sems.append(_semaphore_view(src_sem, "dma_start"))
        sem_params = {f"{which}_sem_{k}": v
                      for which, (_, _, p) in zip(("dst", "src"), sems) for k, v in p.items()}
        views = {f"{end}_{k}": p[k] for end, p in (("src", src), ("dst", dst))
                 for k in ("view_at", "reshape", "bitcast") if k in p}
        bind(P.DmaStartOp, src_t, dst_t,
             *[r.tracer for r, _, _ in sems], *src_starts, *dst_starts,
             *[i for _, idx, _ in sems for i in idx], *src_dyn, *dst_dyn, *ids,
             **sem_params,
             src_sizes=src["sizes"], src_squeezed=src["squeezed"], dst_sizes=dst["sizes"],
             dst_squeezed=dst["squeezed"], has_src_sem=src_sem is not None,
             priority=int(priority), add=bool(self.add), **views, **remote,
             **({"src_levels": src["levels"]} if "levels" in src else {}),
             **({"dst_levels": dst["levels"]} if "levels" in dst else {}))

    def _wait(self, sem, ref, src, ids=(), remote=None) -> None:
        # (selections chosen in the order JAX's wait lowers its ends: src, dst, sem)
        _each_selected((src, ref, sem),
                       lambda s, r, m: self._wait_one(m, r, s, ids, remote))

    def _wait_one(self, sem, ref, src, ids=(), remote=None) -> None:
        sem_ref, idx, sem_params = _semaphore_view(sem, "dma_wait")
        ref_t, starts, params, dyn = _dma_view(ref)
        params.update({f"sem_{k}": v for k, v in sem_params.items()})
        src_t, src_starts, src_params, src_dyn = _dma_view(src)
        params.update({f"src_{k}": v for k, v in src_params.items()}, has_src=True)
        params.update(remote or {})
        bind(P.DmaWaitOp, sem_ref.tracer, ref_t, src_t, *idx, *starts,
             *src_starts, *dyn, *src_dyn, *ids, **params)

    def wait(self) -> None:
        """Waits for the copy to land in the destination (a remote copy: for its send to
        finish, then for it to arrive)."""
        if self.is_remote:
            self.wait_send()
        self.wait_recv()

    def wait_recv(self) -> None:
        ids, remote = self._remote("wait_recv")
        self._wait(self.dst_sem, self.dst_ref, self.src_ref, ids, remote)

    def wait_send(self) -> None:
        # (the copy's ends swapped: a wait names the end its semaphore guards, as JAX's;
        # a remote send's wait names device and core 0, as JAX's Mosaic)
        if self.src_sem is None:
            raise ValueError("wait_send needs a copy made with a source semaphore")
        self._wait(self.src_sem, self.src_ref, self.dst_ref, (),
                   {"dummy_device": True} if self.is_remote else None)


def make_async_copy(src_ref, dst_ref, sem) -> AsyncCopyDescriptor:
    """A DMA from `src_ref` to `dst_ref` (refs or `.at[...]` views of one shape) that
    signals `sem`; call `.start()` and `.wait()`. JAX: pltpu.make_async_copy."""
    return AsyncCopyDescriptor(src_ref, dst_ref, sem)


def async_copy(src_ref, dst_ref, sem, *, priority: int = 0,
               add: bool = False) -> AsyncCopyDescriptor:
    """Starts a DMA (make_async_copy + start); returns its descriptor to wait on.
    JAX: pltpu.async_copy."""
    copy = AsyncCopyDescriptor(src_ref, dst_ref, sem, add=add)
    copy.start(priority=priority)
    return copy


def sync_copy(src_ref, dst_ref, *, add: bool = False) -> None:
    """Copies `src_ref` into `dst_ref` with a DMA and waits for it (a scoped DMA
    semaphore). JAX: pltpu.sync_copy."""
    src_ref, dst_ref = _staged_indexers(src_ref), _staged_indexers(dst_ref)

    def body(sem):
        async_copy(src_ref, dst_ref, sem, add=add).wait()
    run_scoped(body, _ONE_DMA_SEMAPHORE)


def _staged_indexers(view, made=None):
    """`view` with its integer indexers (`.at[1]`, squeezing a dim) staged here, as the
    int32 values JAX's NDIndexer makes of them where the view is made (sync_copy's
    scoped region then takes them from outside); slices' ints stay static."""
    made = [] if made is None else made

    def stage(level):
        return [(_literal_i32(start, made) if sq and isinstance(start, (int, np.integer))
                 else start, size, sq) for start, size, sq in level]
    if isinstance(view, ReshapedRef):
        window = None if view.window is None else stage(view.window)
        return ReshapedRef(_staged_indexers(view.ref, made), view.reshape_to, view.cast,
                           window)
    if isinstance(view, Ref) and view.views:
        # (a view of one window is named by its index, of several by each window)
        views = [stage(v) for v in view.views]
        return Ref(view.tracer, views[0] if len(views) == 1 else view.index, views)
    if isinstance(view, SelectedRef):
        idx = view.idx
        if isinstance(idx, (int, np.integer)):
            idx = _literal_i32(idx, made)
        return SelectedRef(idx, [_staged_indexers(o, made) for o in view.options])
    return view


def _literal_i32(v, made: list):
    """A fresh int32 constant staged here (noted in `made`): each literal its own op, as
    JAX's lowering makes one per literal operand (to_tracer shares one per value and
    line)."""
    (t,) = current_trace().emit(ConstantOp, [], {"value": dense_elements(np.asarray(
        v, np.int32))}, [ShapedArray((), np.dtype(np.int32))])
    made.append(t)
    return t


def _each_selected(ends: tuple, emit) -> None:
    """each_selected, the ends' literal indices staged before the chain of conds that
    picks the options of their selections (where one is a selection), in the ends'
    order, as JAX's DMA takes them: operands of the one primitive whose lowering
    repeats it in each branch."""
    if not any(isinstance(e, SelectedRef) for e in ends):
        return each_selected(ends, emit)
    made = []
    ends = tuple(_staged_indexers(e, made) for e in ends)
    each_selected(ends, emit, made)


def make_async_remote_copy(src_ref, dst_ref, send_sem, recv_sem, device_id,
                           device_id_type=DeviceIdType.MESH) -> AsyncCopyDescriptor:
    """A DMA from `src_ref` here to `dst_ref` on the device `device_id` names (its
    coordinates in the shard_map's mesh, or its logical id), signalling `send_sem` here
    and `recv_sem` there. Lowers for the TPU; interpret mode refuses it (it runs one
    device's kernel at a time). JAX: pltpu.make_async_remote_copy."""
    return AsyncCopyDescriptor(src_ref, dst_ref, recv_sem, send_sem, device_id,
                               device_id_type)


def async_remote_copy(src_ref, dst_ref, send_sem, recv_sem, device_id,
                      device_id_type=DeviceIdType.MESH) -> AsyncCopyDescriptor:
    """Starts a DMA to another device (make_async_remote_copy + start).
    JAX: pltpu.async_remote_copy."""
    copy = make_async_remote_copy(src_ref, dst_ref, send_sem, recv_sem, device_id,
                                  device_id_type)
    copy.start()
    return copy

__all__ = ["AsyncCopyDescriptor", "DeviceIdType", "async_copy", "async_remote_copy",
           "make_async_copy", "make_async_remote_copy", "run_scoped", "semaphore_read",
           "semaphore_signal", "semaphore_wait", "sync_copy"]
