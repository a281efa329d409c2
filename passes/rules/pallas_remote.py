"""Rules for `jaxpr.remote_update` (dialect/ops/pallas_remote.py): a discharged remote
DMA or remote semaphore signal of an interpreted Pallas TPU kernel.

Batching along a mesh axis of the op (a shard_map's vmap) stacks every operand along
it and records the axis as resolved. Inside control flow that differs across the
devices (a cond on the device id, a loop some devices leave early) it is refused: the
batched branch's per-device select would drop the writes into devices not taking it.
Once every mesh axis is resolved, the writes of all devices are one scatter over the
flattened device axis:

    update of device s -> dst of device t(s) = sum_k coords_k(s) * stride_k, window at
    starts(s); inactive devices' writes are dropped (their target index is out of range)

`add` scatters with addition (semaphore counts from several devices add up); plain
writes of several devices to one window race, as on the chip (any one wins). A chip's
TensorCores in lockstep (passes/pallas_cores.py) are one more mesh axis, the last, its
name `core_axis()`; `shared_ref` tells the refs every core shares (HBM).
"""
from __future__ import annotations

import contextlib
import contextvars
import math

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.ops.callbacks import CallbackOp
from mjax.dialect.ops.pallas_remote import RemoteUpdateOp
from mjax.dialect.types import aval_of
from mjax.passes.rules import batch_util as B
from mjax.passes.rules.tables import JVP, LOWER, SHARD, TRANSPOSE, TRITON

# (axes, sizes) of the shard_map mesh whose devices' kernel instances are being
# discharged together (passes/pallas_mesh.py); None: one instance alone
_MESH: contextvars.ContextVar = contextvars.ContextVar("pallas_mesh", default=None)
# A count a semaphore wait finds too small is set to this (and stays far below zero):
# in lockstep nothing later in this step can raise it, so the wait would hang
POISON = -(1 << 30)
# Whether the kernel being discharged counts its DMA semaphores in bytes (JAX's TPU
# interpreter, pltpu.InterpretParams) or in elements (interpret=True)
_DMA_BYTES: contextvars.ContextVar = contextvars.ContextVar("pallas_dma_bytes",
                                                            default=False)
# Cores in lockstep (passes/pallas_cores.py): the last axis of the mesh being discharged
# for is the chip's TensorCores: (its name, the numbers of the kernel function's entry
# arguments whose refs the cores share (its HBM operands), the kernel's name); None: none
_CORES: contextvars.ContextVar = contextvars.ContextVar("pallas_cores", default=None)
# While a kernel's instances run in rounds (passes/pallas_rounds.py): every cond that
# synchronizes runs predicated; a probe of a wait collects its `short` flags here
# instead of poisoning and reporting them
_ROUNDS: contextvars.ContextVar = contextvars.ContextVar("pallas_rounds", default=False)
_PROBE: contextvars.ContextVar = contextvars.ContextVar("pallas_probe", default=None)


@contextlib.contextmanager
def _setting(var: contextvars.ContextVar, value):
    """`var` set to `value` for the block (which gets the value)."""
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)


def in_rounds():
    """Discharges a kernel's steps for instances running in rounds (each its own step)."""
    return _setting(_ROUNDS, True)


def running_in_rounds() -> bool:
    return _ROUNDS.get()


def probing():
    """Discharging a wait under it only asks whether the wait would find enough: gives
    the list its i1 `short` flags are added to (no count is poisoned, nothing raises)."""
    return _setting(_PROBE, [])


def dma_counts_in_bytes(flag: bool):
    """Discharges kernels whose DMAs signal (and waits take) their byte counts if `flag`,
    else their element counts."""
    return _setting(_DMA_BYTES, bool(flag))


def dma_counts_bytes() -> bool:
    return _DMA_BYTES.get()


@contextlib.contextmanager
def on_mesh(axes, shape, cores=None):
    """Discharges kernels as one instance of many on the mesh (`axes`, `shape`); with
    `cores` = (core axis, shared entry arguments, kernel name), the mesh's last axis is
    the chip's TensorCores (a multi-core kernel's cores in lockstep)."""
    with _setting(_MESH, (tuple(axes), tuple(int(s) for s in shape))), \
            _setting(_CORES, cores):
        yield


def core_axis():
    """The name of the core axis of the mesh being discharged for, or None."""
    cores = _CORES.get()
    return None if cores is None else cores[0]


def current_mesh():
    """(axes, sizes) of the mesh being discharged for, or None."""
    return _MESH.get()


def current_cores():
    """on_mesh's `cores` of the kernel being discharged (None: no cores in lockstep)."""
    return _CORES.get()


def coordinates(b, ids, device_id_type: str, mesh) -> list:
    """The target's i32 coordinate along each mesh axis (a logical id unravelled
    row-major over the mesh, as JAX numbers a shard_map's devices)."""
    axes, shape = mesh
    if device_id_type == "logical":
        (i,) = ids
        return [b.rem(b.div(i, b.constant(np.int32(math.prod(shape[k + 1:])))),
                      b.constant(np.int32(shape[k]))) for k in range(len(shape))]
    if len(ids) != len(shape):
        raise ValueError(f"Number of device ids must match the number of mesh axes, but "
                         f"got {len(ids)} ids for a {len(shape)}D mesh.")
    return list(ids)


def remote_write(b, dst, window, value, coords, add: bool = False, active=None):
    """`dst` after `value` (the window's shape less its squeezed dims) is written (added)
    into `window` = (starts, sizes, squeezed) of the device at `coords` (where `active`:
    an i1 scalar, None for always)."""
    starts, sizes, squeezed = window
    if tuple(aval_of(value.type).shape) != tuple(sizes):
        value = b.reshape(value, new_sizes=tuple(sizes))
    axes, shape = current_mesh()
    if active is None:
        active = b.constant(np.array(True))
    if "device_id" in REPORT:       # (a device outside the mesh: an error, as in JAX)
        bad = b.constant(np.array(False))
        for c, size in zip(coords, shape):
            out = b.emit("or", b.lt(c, b.constant(np.int32(0))),
                         b.ge(c, b.constant(np.int32(size))))[0]
            bad = b.emit("or", bad, out)[0]
        b.emit(CallbackOp, b.emit("and", bad, active)[0], *coords,
               callback_id=REPORT["device_id"], effect="unordered", result_shapes=None,
               result_dtypes=None, vmap_method=None)
    return b.emit(RemoteUpdateOp, dst, value, active, *starts, *coords, axes=axes,
                  mesh_shape=shape, add=add)[0]


def shared_ref(ref) -> bool:
    """Whether the kernel ref `ref` is one every core of the chip shares (an HBM operand:
    cores in lockstep), traced back through the regions passing it in (run_scoped, cond,
    scan, while) or a run_scoped's buffer in HBM; a ref the kernel makes elsewhere
    (VMEM or SMEM scratch, semaphores) and every ref when no cores are in lockstep are
    not."""
    cores = _CORES.get()
    if cores is None:
        return False
    _, shared, kernel = cores
    v = ref
    while isinstance(v, ir.BlockArgument):
        block = v.owner
        parent = block.owner.operation
        k, ops = v.arg_number, list(parent.operands)
        if parent.name == "func.func":
            if ir.StringAttr(parent.attributes["sym_name"]).value != kernel:
                raise NotImplementedError(
                    "a DMA in a function a multi-core Pallas kernel calls, its cores in "
                    "lockstep in interpret mode, is not supported by mjax")
            return k in shared
        if parent.name in ("jaxpr.run_scoped", "jaxpr.scan"):    # (consts first)
            if k >= len(ops):    # (a scoped buffer: in HBM every core's, as in JAX's)
                spaces = (parent.opview.params.get("scratch_memory_spaces") or ()
                          if parent.name == "jaxpr.run_scoped" else ())
                return k - len(ops) < len(spaces) and spaces[k - len(ops)] in (
                    "any", "hbm")
            v = ops[k]
        elif parent.name == "jaxpr.cond":                        # (index, *operands)
            v = ops[1 + k]
        elif parent.name == "jaxpr.while":   # (cond consts, body consts, init)
            nc = int(parent.opview.params.get("cond_nconsts", 0) or 0)
            v = ops[k] if block.region == parent.regions[0] else ops[nc + k]
        else:
            raise NotImplementedError(
                f"a DMA of a ref passed into {parent.name} in a multi-core Pallas kernel, "
                f"its cores in lockstep in interpret mode, is not supported by mjax")
    return False


# The host callback reporting a wait lockstep cannot satisfy: {"callback_id": id}, set
# by the frontend (mjax.experimental.pallas.tpu registers it)
REPORT: dict = {}


def lockstep_wait(b, old, amount, active=None):
    """A wait's new count (`old` an i32 scalar): `old - amount`; where `old` is too small
    POISON, and the frontend's report callback raises (a wait lockstep cannot satisfy);
    `old` where not `active` (an i1 scalar, None: always). Under `probing` (the rounds
    of passes/pallas_rounds.py asking whether a wait can run): `old`, its `short` flag
    collected."""
    short = b.lt(old, amount)
    probe = _PROBE.get()
    if probe is not None:
        probe.append(short)
        return old
    taken = b.sub(old, amount)
    if active is not None:
        short = b.emit("and", short, active)[0]
        taken = b.select_n(active, old, taken)
    if "callback_id" in REPORT:
        b.emit(CallbackOp, short, old, amount, callback_id=REPORT["callback_id"],
               effect="unordered", result_shapes=None, result_dtypes=None,
               vmap_method=None)
    return b.select_n(short, taken, b.constant(np.int32(POISON)))


for _table, _why in (
        (LOWER, "a write into another device's buffer from an interpreted Pallas kernel "
                "runs only under the shard_map (vmaps over its mesh axes) the kernel was "
                "traced in, whose batching makes it a scatter across the devices"),
        (JVP, "remote DMAs have no derivative (JAX's interpreter has none either)"),
        (TRANSPOSE, "remote DMAs are not linear functions of the program's inputs"),
        (SHARD, "it appears only inside interpreted Pallas kernels, which sharding "
                "propagation does not enter"),
        (TRITON, "remote DMAs are a TPU feature")):
    _table.unsupported(RemoteUpdateOp, _why)
B.uses_named_axes(RemoteUpdateOp)


@B.batch_rule(RemoteUpdateOp)
def _remote_update_batch(b, args, dims, *, axes, mesh_shape, add, resolved=()):
    if b.axis_name not in axes:
        raise NotImplementedError(
            f"vmap (over axis {b.axis_name!r}) of a Pallas kernel with remote DMAs or "
            f"semaphore signals in interpret mode: only the shard_map's mesh axes "
            f"{tuple(axes)} may batch it in mjax")
    k = tuple(axes).index(b.axis_name)
    vals = [B.bdim_at(b, v, d, 0) for v, d in zip(args, dims)]
    if b.write_mask is not None:
        raise NotImplementedError(
            "a remote DMA or semaphore signal in a loop whose trip count differs across "
            "the devices in interpret mode is not supported by mjax")
    resolved = (k,) + tuple(resolved)
    if len(resolved) < len(axes):
        return b.emit(RemoteUpdateOp, *vals, axes=axes, mesh_shape=mesh_shape, add=add,
                      resolved=resolved), [0]
    return [_scatter(b, vals, tuple(mesh_shape), add, resolved)], [0]


def _scatter(b, vals, mesh_shape, add, resolved):
    """Every device's write at once (operands stacked along the `resolved` axes)."""
    dst, update, active, *rest = vals
    lead = tuple(mesh_shape[k] for k in resolved)
    n, total = len(lead), math.prod(lead)
    dshape = aval_of(dst.type).shape[n:]
    r = len(dshape)
    starts, coords = rest[:r], rest[r:]

    def flat(x):
        return b.reshape(x, new_sizes=(total,) + aval_of(x.type).shape[n:])

    def full(v):
        return b.constant(np.full((total,), v, np.int32))
    target = full(0)
    valid = b.constant(np.ones((total,), np.bool_))
    for pos, k in enumerate(resolved):
        c = flat(coords[k])
        target = b.add(target, b.mul(c, full(math.prod(lead[pos + 1:]))))
        inside = b.emit("and", b.ge(c, full(0)), b.lt(c, full(mesh_shape[k])))[0]
        valid = b.emit("and", valid, inside)[0]
    keep = b.emit("and", flat(active), valid)[0]
    target = b.select_n(keep, full(total), target)      # (out of range: dropped)
    column = (lambda x: b.reshape(x, new_sizes=(total, 1)))
    idx = b.concatenate(column(target), *[column(flat(s)) for s in starts], dimension=1)
    dnums = {"update_window_dims": tuple(range(1, r + 1)), "inserted_window_dims": (0,),
             "scatter_dims_to_operand_dims": tuple(range(r + 1)),
             "operand_batching_dims": (), "scatter_indices_batching_dims": ()}
    scatter = b.scatter_add if add else b.scatter
    out = scatter(flat(dst), idx, flat(update), dimension_numbers=dnums,
                  indices_are_sorted=False, unique_indices=False, mode="fill")
    return b.reshape(out, new_sizes=lead + tuple(dshape))


__all__ = ["POISON", "REPORT", "coordinates", "core_axis", "current_mesh",
           "current_cores", "dma_counts_bytes", "dma_counts_in_bytes", "in_rounds", "lockstep_wait",
           "on_mesh", "probing", "remote_write", "running_in_rounds", "shared_ref"]
