"""Rules for the Pallas TPU kernel ops (dialect/ops/pallas_tpu.py): DMAs, semaphores,
`jaxpr.run_scoped`, and the value ops `multiple_of` (its operand outside Mosaic) and
`roll` (jnp.roll's rotation outside Mosaic; linear in x, batched along x).

Interpret mode: `--jaxpr-pallas-interpret` (and `--jaxpr-discharge-state`) turn them into
value ops through the DISCHARGE_NESTED table (`rule(discharge, op)`; they may update
several refs at once, so they get the discharge itself, as control flow does):

- `dma_start` copies src's view into dst's view at once and adds its size to dst_sem
  (and src_sem); `dma_wait` subtracts the size of the view it names. The size is in
  bytes with pltpu.InterpretParams (JAX's TPU interpreter), in elements (at most
  32767, an int16 count) with interpret=True (JAX's generic one): `dma_count`. A kernel
  that waits for every copy it starts sees its semaphores back at zero, as on the chip.
- `semaphore_signal` adds, `semaphore_wait` subtracts (never blocks: one kernel instance
  runs at a time), `semaphore_read` reads (with interpret=True as an int16: wrapped).
- On a shard_map's devices (passes/pallas_mesh.py) or a chip's cores in lockstep
  (passes/pallas_cores.py) a remote DMA or signal writes through `jaxpr.remote_update`
  (passes/rules/pallas_remote.py), a wait finding too small a count is poisoned and
  reported, and updates honour a predicated branch's `active`; with cores, a DMA into
  HBM writes every core's copy.
- `run_scoped` inlines its body, its scoped buffers starting uninitialized (NaN, the
  minimum integer; semaphores 0), as pallas_call's scratch does.
- `debug_print` (a print in a kernel) becomes its debug host callback, as a print
  outside kernels; discharge enters loop bodies and branches holding one.

The transformations never meet these ops one by one: vmap and jvp of a pallas_call
transform the discharged kernel (passes/rules/pallas.py). Lowering on a TPU:
`--jaxpr-pallas-to-mosaic`. JAX: pallas/mosaic/primitives.py (discharge rules) and
pallas/mosaic/interpret.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.dtype_rules import bitwidth
from mjax.dialect.ops import pallas_tpu as P
from mjax.dialect.ops.callbacks import CallbackOp
from mjax.dialect.ops.collectives import AxisIndexOp
from mjax.dialect.ops.pallas import SEMAPHORE_SPACES, scratch_memory_spaces
from mjax.dialect.types import RefAval, aval_of
from mjax.passes import pallas_bounds as BOUNDS
from mjax.passes.ir_util import reachable_functions
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import batch_util as B
from mjax.passes.rules import hlo as H
from mjax.passes.rules import pallas_remote as R
from mjax.passes.rules.sharding import shard_elementwise
from mjax.passes.rules.state import _bitcast_view, _padded, _read, _unpadded, _write
from mjax.passes.rules.tables import (BATCH, DISCHARGE, DISCHARGE_NESTED, JVP, LOWER, SHARD,
                                      TRANSPOSE,
                                      TRITON, lowering)

_WHY = {
    LOWER: "Pallas TPU kernel ops are discharged before lowering: "
           "--jaxpr-pallas-interpret runs them (a DMA is a copy, a semaphore a counter), "
           "--jaxpr-pallas-to-mosaic compiles them for a TPU",
    BATCH: "Pallas TPU kernel ops appear only inside Pallas kernels; vmap batches the "
           "whole jaxpr.pallas_call (a new leading grid dimension)",
    SHARD: "Pallas TPU kernel ops appear only inside Pallas kernels, which sharding "
           "propagation does not enter",
    JVP: "Pallas TPU kernel ops appear only inside Pallas kernels; jvp of a "
         "jaxpr.pallas_call differentiates the discharged kernel",
    TRANSPOSE: "Pallas TPU kernel ops appear only inside Pallas kernels, which have no "
               "reverse mode (use jax.custom_vjp around the pallas_call)",
    TRITON: "DMAs, semaphores and run_scoped are Pallas TPU features; Triton kernels "
            "cannot use them (JAX's Triton lowering has no rule for them either)",
}
for _op in P.DMA_OPS + P.SEMAPHORE_OPS + (P.RunScopedOp, P.GetBarrierSemaphoreOp):
    for _table, _why in _WHY.items():
        _table.unsupported(_op, _why)
# The kernel PRNG's bits are the chip's: nothing else makes them.
_PRNG_WHY = ("the TPU kernel PRNG (pltpu.prng_seed / prng_random_bits) runs only in a "
             "kernel compiled for a TPU (interpret mode cannot make its bits: pass random "
             "bits made with jax.random into the kernel)")
for _op in P.PRNG_OPS:
    for _table in (LOWER, BATCH, SHARD, JVP, TRANSPOSE, TRITON):
        _table.unsupported(_op, _PRNG_WHY)


def _i32(b, v):
    if np.dtype(aval_of(v.type).dtype) != np.int32:
        return b.convert_element_type(v, new_dtype=np.dtype(np.int32))
    return v


def dma_count(b, sizes, dtype):
    """What a DMA of a window of `sizes` (ints or i32 values) of `dtype` signals and its
    wait takes, as JAX's interpreters count: bytes (pltpu.InterpretParams: the bytes the
    DMA reads; a wait, its descriptor's source's) or elements capped at int16's maximum
    (interpret=True: the semaphore is an int16 there; a wait, its destination's)."""
    unit = np.dtype(dtype).itemsize if R.dma_counts_bytes() else 1
    static = unit * int(np.prod([x for x in sizes if isinstance(x, int)], dtype=np.int64))
    if not R.dma_counts_bytes():
        static = min(static, _SEM_MAX) if all(isinstance(x, int) for x in sizes) else static
    count = b.constant(np.int32(static))
    for x in sizes:
        if not isinstance(x, int):
            count = b.mul(count, _i32(b, x))
    if not R.dma_counts_bytes() and not all(isinstance(x, int) for x in sizes):
        count = b.min(count, b.constant(np.int32(_SEM_MAX)))
    return count


# JAX's generic interpreter's semaphores are int16: a DMA's element count is capped
_SEM_MAX = np.iinfo(np.int16).max


def _sem_add(b, sem, idx, delta):
    """`sem` with the counter at `idx` increased by `delta` (an i32 scalar value)."""
    a = aval_of(sem.type)
    one = (1,) * a.ndim
    squeezed = tuple(range(a.ndim))
    old = _read(b, sem, idx, one, squeezed)
    return _write(b, sem, idx, one, squeezed, b.add(old, delta))


def _window(b, ref, starts, sizes, squeezed, levels, dyn=()):
    """(starts, sizes, squeezed) of the one window a (chained) view of `ref` is; a
    dynamic size (DYNAMIC_SIZE) is its i32 value from `dyn`."""
    return _fold_window(b, aval_of(ref.type).shape, starts, sizes, squeezed, levels, dyn)


def _fold_window(b, shape, starts, sizes, squeezed, levels, dyn=()):
    """_window over a view of `shape`."""
    out_starts, out_sizes, out_sq = [], [], []
    for d, (at, size, sq, pos) in enumerate(P.fold_view(shape, levels, sizes, squeezed)):
        start = starts[at[0]]
        for k in at[1:]:
            start = b.add(start, starts[k])
        out_starts.append(start)
        if size == P.DYNAMIC_SIZE:
            size = dyn[P.n_dynamic(tuple(sizes)[:pos])]
        out_sizes.append(size)
        if sq:
            out_sq.append(d)
    return out_starts, tuple(out_sizes), tuple(out_sq)


def _bounded_copy(b, src, sw, dst, dw, add):
    """`dst` with the window `dw` replaced by (or, with add, increased by) the window
    `sw` of `src`, where some sizes are i32 values: both are read `bound` elements long
    along those dims (the smaller ref dim) from the refs padded past their ends, and only
    the first `size` elements are written."""
    s_shape, d_shape = aval_of(src.type).shape, aval_of(dst.type).shape
    s_keep = [d for d in range(len(s_shape)) if d not in sw[2]]
    d_keep = [d for d in range(len(d_shape)) if d not in dw[2]]
    s_sizes, d_sizes = list(sw[1]), list(dw[1])
    counts = []                      # (the dst dim, its size value) per dynamic dim
    for sd, dd in zip(s_keep, d_keep):
        size = next((x for x in (d_sizes[dd], s_sizes[sd]) if not isinstance(x, int)),
                    None)
        if size is None:
            continue
        bound = min(s_shape[sd], d_shape[dd])
        s_sizes[sd] = d_sizes[dd] = bound
        counts.append((dd, size))
    pad_s = [n if not isinstance(x, int) else 0 for n, x in zip(s_sizes, sw[1])]
    pad_d = [n if not isinstance(x, int) else 0 for n, x in zip(d_sizes, dw[1])]
    value = _read(b, _padded(b, src, pad_s), sw[0], s_sizes, sw[2])
    padded = _padded(b, dst, pad_d)
    full = tuple(d_sizes)
    old = _read(b, padded, dw[0], full, ())
    value = b.reshape(value, new_sizes=full)
    if add:
        value = b.add(old, value)
    mask = None
    for dd, size in counts:
        ids = b.iota(dtype=np.dtype(np.int32), shape=full, dimension=dd)
        lim = b.broadcast_in_dim(_i32(b, size), shape=full, broadcast_dimensions=())
        m = b.lt(ids, lim)
        mask = m if mask is None else b.emit("and", mask, m)[0]
    value = b.select_n(mask, old, value)
    return _unpadded(b, _write(b, padded, dw[0], full, (), value), d_shape)


def _transformed(b, ref, starts, sizes, squeezed, levels, transform):
    """A reshaped/bitcast DMA view (dialect: transformed_levels): (the window of `ref`
    the view is made from, the new shape and dtype, the window of that the view is)."""
    at, reshape, bitcast = transform
    a = aval_of(ref.type)
    per, _, _ = P.transformed_levels(RefAval(a.shape, a.dtype), levels, sizes, squeezed,
                                     at, reshape, bitcast)
    n = sum(tuple(levels)[:at])
    if at:
        base = _fold_window(b, a.shape, starts[:n], sizes[:n],
                            [k for k in squeezed if k < n], tuple(levels)[:at])
    else:
        base = ([b.constant(np.int32(0))] * len(a.shape), tuple(a.shape), ())
    post = _fold_window(b, per[at][0].shape, starts[n:], sizes[n:],
                        [k - n for k in squeezed if k >= n], tuple(levels)[at:])
    return base, (reshape, bitcast), post


def _view_read(b, x, view):
    base, (reshape, bitcast), post = view
    v = _read(b, x, *base)
    if reshape:
        v = b.reshape(v, new_sizes=tuple(reshape))
    if bitcast is not None:
        v = _bitcast_view(b, v, np.dtype(bitcast))
    return _read(b, v, *post)


def _view_write(b, x, view, value):
    """`x` with `value` written through the view: its part read, the view's window
    written, bitcast back (the inverse packing) and reshaped back, written into `x`."""
    base, (reshape, bitcast), post = view
    old = _read(b, x, *base)
    v = old
    if reshape:
        v = b.reshape(v, new_sizes=tuple(reshape))
    if bitcast is not None:
        v = _bitcast_view(b, v, np.dtype(bitcast))
    v = _write(b, v, *post, value)
    if bitcast is not None:
        v = _bitcast_view(b, v, np.dtype(aval_of(x.type).dtype))
    v = b.reshape(v, new_sizes=aval_of(old.type).shape)
    return _write(b, x, *base, v)


def _local_only(op, remote: bool = False) -> bool:
    """Whether the op names another device (or `remote`: an op only devices together
    use). Discharged for the devices of a shard_map mesh together (passes/pallas_mesh.py)
    it may; otherwise it is refused (one kernel instance runs by itself)."""
    p = op.opview.params
    # (another core of the chip: remote where the cores run in lockstep)
    core = int(p.get("core_ids", 0) or 0)
    if not (remote or core or int(p.get("device_ids", 0) or 0) or p.get("dummy_device")):
        return False
    if R.current_mesh() is not None and (not core or R.core_axis() is not None):
        return True
    # (a kernel only a dead function calls, the untransformed original a transformation
    # leaves behind until symbol-dce, is expanded too: its result is never used)
    fn = op.operation.parent
    while fn is not None and fn.name != "func.func":
        fn = fn.parent
    module = fn.parent if fn is not None else None
    if module is not None:
        fns = {ir.StringAttr(f.attributes["sym_name"]).value: f.operation
               for f in module.regions[0].blocks[0].operations
               if f.operation.name == "func.func"}
        if ir.StringAttr(fn.attributes["sym_name"]).value not in reachable_functions(fns):
            return
    if core:
        raise NotImplementedError(
            f"{op.name} to another core (core_index=, a device_id naming the core axis, "
            f"pltpu.core_barrier) in interpret mode in a multi-core kernel that vmap or "
            f"jvp transforms is not supported by mjax: its cores run in lockstep "
            f"(passes/pallas_cores.py) only in the kernel's own pallas_call")
    raise NotImplementedError(
            f"{op.name} (a DMA or signal to another device: pltpu.make_async_remote_copy"
            f", semaphore_signal with device_id=; or get_barrier_semaphore) in interpret "
            f"mode: mjax's interpreter "
            f"runs each device's kernel instance by itself, without the other devices' "
            f"buffers and semaphores; lower it for the TPU instead")


def _device_coords(b, env, op) -> list:
    """The mesh coordinates of the device the op's device id operands name; with cores in
    lockstep (the mesh's last axis), the core its core id names, else this core (a DMA
    to another device lands on the same core there, as in JAX's interpreter), and this
    device where it names none."""
    p = op.opview.params
    n, c = int(p.get("device_ids", 0) or 0), int(p.get("core_ids", 0) or 0)
    operands = list(op.operands)
    ids = [_i32(b, env[v]) for v in operands[len(operands) - c - n:len(operands) - c]]
    core = R.core_axis()
    if core is None:
        return R.coordinates(b, ids, p["device_id_type"], R.current_mesh())
    axes, shape = R.current_mesh()
    devices = (axes[:-1], shape[:-1])
    coords = (R.coordinates(b, ids, p["device_id_type"], devices) if n else
              [b.emit(AxisIndexOp, axes=(a,))[0] for a in devices[0]])
    return coords + [_i32(b, env[operands[-1]]) if c else
                     b.emit(AxisIndexOp, axes=(core,))[0]]


def _write_remote(b, dst, window, value, coords, add, active, shared: bool):
    """`dst` after a DMA's write into the device (and core) at `coords`; into a buffer
    the cores share (HBM), the write lands in every core's copy of it."""
    if not shared:
        return R.remote_write(b, dst, window, value, coords, add, active)
    for k in range(R.current_mesh()[1][-1]):
        dst = R.remote_write(b, dst, window, value, coords[:-1] + [b.constant(np.int32(k))],
                             add, active)
    return dst


def _sem_take(b, sem, idx, amount, active=None):
    """`sem` after a wait for `amount` at `idx`: subtracted, or (devices in lockstep) the
    count poisoned and reported where it is too small (the wait would hang); nothing
    where not `active`."""
    if R.current_mesh() is None:
        return _sem_add(b, sem, idx, b.neg(amount))
    a = aval_of(sem.type)
    one = (1,) * a.ndim
    squeezed = tuple(range(a.ndim))
    old = _read(b, sem, idx, one, squeezed)
    return _write(b, sem, idx, one, squeezed, R.lockstep_wait(b, old, amount, active))


def _masks_itself(rule):
    """Marks a discharge rule that honours a predicated run's `active` itself (remote
    writes land on the devices they name whether or not those run the branch)."""
    rule.masks_itself = True
    return rule


def _local_operands(op) -> list:
    """The op's operands before those naming another device (or core)."""
    p = op.opview.params
    named = int(p.get("device_ids", 0) or 0) + int(p.get("core_ids", 0) or 0)
    return list(op.operands)[:len(op.operands) - named]


@_masks_itself
def _dma_start(d, op):
    refs = P.DmaStartOp.layout(_local_operands(op), *_dma_layout_params(op))[0]
    before = {r: d.env[r] for r in refs}
    remote = _dma_start_effects(d, op)
    for r in refs[3:] if remote else refs:      # (a remote dst is never masked here)
        d.env[r] = d.masked(op.location, d.env[r], before[r])


def _dma_layout_params(op):
    p = op.opview.params
    return (p["has_src_sem"], p["src_levels"], p["dst_levels"], p["src_sizes"],
            p["dst_sizes"], p["dst_sem_levels"], p["src_sem_levels"])


def _dma_start_effects(d, op) -> bool:
    """The DMA's copy and signals; whether it is remote."""
    remote = _local_only(op)
    p = op.opview.params
    env = d.env
    b = d.builder(op)
    refs, starts, dyn = P.DmaStartOp.layout(_local_operands(op), *_dma_layout_params(op))
    starts = [[_i32(b, env[s]) for s in st] for st in starts]
    dyn = [[env[v] for v in x] for x in dyn]
    src, dst = env[refs[0]], env[refs[1]]
    views = [(p[f"{e}_view_at"], p[f"{e}_reshape"], p[f"{e}_bitcast"])
             for e in ("src", "dst")]
    shared = R.shared_ref(refs[1])      # (HBM, the cores in lockstep: every core's copy)
    if (remote or shared) and (views[0][0] >= 0 or views[1][0] >= 0 or dyn[0] or dyn[1]):
        raise NotImplementedError("a remote DMA (or, the cores in lockstep, one into "
                                  "HBM) of a reshaped or bitcast view or of a window of "
                                  "traced size in interpret mode is not supported by mjax")
    if views[0][0] >= 0 or views[1][0] >= 0:
        if dyn[0] or dyn[1]:
            raise NotImplementedError("a DMA between a reshaped or bitcast view and a "
                                      "window of traced size is not supported by mjax")
        sv, dv = (_transformed(b, refs[k], starts[k], p[f"{e}_sizes"], p[f"{e}_squeezed"],
                               p[f"{e}_levels"], views[k]) if views[k][0] >= 0 else
                  ((*_window(b, refs[k], starts[k], p[f"{e}_sizes"], p[f"{e}_squeezed"],
                             p[f"{e}_levels"], dyn[k]),), ((), None), None)
                  for k, e in enumerate(("src", "dst")))
        value = _view_read(b, src, sv) if sv[2] is not None else _read(b, src, *sv[0])
        count = _value_count(b, value)
        if p["add"]:
            old = _view_read(b, dst, dv) if dv[2] is not None else _read(b, dst, *dv[0])
            value = b.add(old, value)
        env[refs[1]] = (_view_write(b, dst, dv, value) if dv[2] is not None
                        else _write(b, dst, *dv[0], value))
        _signal(b, env, p, refs, starts, count)
        return False
    sw = _window(b, refs[0], starts[0], p["src_sizes"], p["src_squeezed"],
                 p["src_levels"], dyn[0])
    window = _window(b, refs[1], starts[1], p["dst_sizes"], p["dst_squeezed"],
                     p["dst_levels"], dyn[1])
    if not (dyn[0] or dyn[1]):      # (JAX's TPU interpreter's bounds checks)
        BOUNDS.check_access(b, src, sw[0], sw[1], BOUNDS.READ)
        BOUNDS.check_access(b, dst, window[0], window[1], BOUNDS.WRITE)
        fill = BOUNDS.uninitialized_reads()
        if fill is not None and tuple(sw[1]) != aval_of(src.type).shape:
            src = BOUNDS.read_padded(b, src, sw[1], fill)
    if remote or shared:
        coords = _device_coords(b, env, op)
        value = _read(b, src, *sw)
        env[refs[1]] = _write_remote(b, dst, window, value, coords, p["add"], d.active,
                                     shared)
        _signal(b, env, p, refs, starts, _value_count(b, value), coords, d.active)
        return True
    if dyn[0] or dyn[1]:
        env[refs[1]] = _bounded_copy(b, src, sw, dst, window, p["add"])
        count = dma_count(b, sw[1], aval_of(src.type).dtype)
    else:
        value = _read(b, src, *sw)
        count = _value_count(b, value)
        if p["add"]:
            value = b.add(_read(b, dst, *window), value)
        env[refs[1]] = _write(b, dst, *window, value)
    _signal(b, env, p, refs, starts, count)
    return False


def _value_count(b, value):
    a = aval_of(value.type)
    return dma_count(b, tuple(a.shape), a.dtype)


def _signal(b, env, p, refs, starts, count, coords=None, active=None) -> None:
    """A DMA's semaphores signalled (+`count`; dst_sem on the device at `coords` if
    given)."""
    for k in range(2, len(refs)):      # dst_sem, then src_sem (the same ref may be both)
        which = "dst" if k == 2 else "src"
        idx = starts[k]
        if p[f"{which}_sem_levels"]:
            idx = _window(b, refs[k], idx, p[f"{which}_sem_sizes"],
                          p[f"{which}_sem_squeezed"], p[f"{which}_sem_levels"])[0]
        if k == 2 and coords is not None:
            nd = aval_of(refs[k].type).ndim
            env[refs[k]] = R.remote_write(b, env[refs[k]], (idx, (1,) * nd, ()),
                                          count, coords, True, active)
        else:
            env[refs[k]] = _sem_add(b, env[refs[k]], idx, count)


@_masks_itself
def _dma_wait(d, op):
    _local_only(op)
    b = d.builder(op)
    p = op.opview.params
    sem, ref, src, idx, starts, src_starts, dyn = P.DmaWaitOp.layout(
        _local_operands(op), p["levels"], p["has_src"], p["src_levels"], p["sizes"],
        p["src_sizes"], p["sem_levels"])
    idx = [_i32(b, d.env[s]) for s in idx]
    if p["sem_levels"]:
        idx = _window(b, sem, idx, p["sem_sizes"], p["sem_squeezed"], p["sem_levels"])[0]
    # (JAX's TPU interpreter takes the byte count of the descriptor's source, its
    # generic one the element count of the destination; the frontend's wait names the
    # end its semaphore guards as `ref`, the other end as `src`)
    end = "src" if R.dma_counts_bytes() and src is not None else ""
    count = _window_count(b, d.env, src if end else ref, src_starts if end else starts,
                          p, end, dyn[1] if end else dyn[0])
    d.env[sem] = _sem_take(b, d.env[sem], idx, count, d.active)


def _window_count(b, env, ref, starts, p, end, dyn):
    """dma_count of the (possibly reshaped or bitcast) view a wait names."""
    pre = f"{end}_" if end else ""
    starts = [_i32(b, env[s]) for s in starts]
    dyn = [env[v] for v in dyn]
    if p[f"{pre}view_at"] >= 0:
        view = (p[f"{pre}view_at"], p[f"{pre}reshape"], p[f"{pre}bitcast"])
        _, (_, bitcast), post = _transformed(b, ref, starts, p[f"{pre}sizes"],
                                             p[f"{pre}squeezed"], p[f"{pre}levels"], view)
        dtype = bitcast if bitcast is not None else aval_of(ref.type).dtype
        return dma_count(b, post[1], dtype)
    sizes = _window(b, ref, starts, p[f"{pre}sizes"], p[f"{pre}squeezed"],
                    p[f"{pre}levels"], dyn)[1]
    return dma_count(b, sizes, aval_of(ref.type).dtype)


def _sem_index(b, d, op, at: int) -> list:
    """The index of the one semaphore a semaphore op names (its operands from `at`; a
    chained view folded into one window)."""
    p = op.opview.params
    idx = [_i32(b, d.env[s]) for s in _local_operands(op)[at:]]
    if p.get("levels"):
        idx = _window(b, op.operands[0], idx, p["sizes"], p["squeezed"], p["levels"])[0]
    return idx


def _semaphore(sign):
    @_masks_itself
    def rule(d, op):
        remote = _local_only(op)
        b = d.builder(op)
        if sign < 0 and not op.opview.params.get("decrement", True):
            return                        # (waiting alone changes nothing here)
        sem, value = op.operands[0], d.env[op.operands[1]]
        idx = _sem_index(b, d, op, 2)
        if remote:
            nd = aval_of(sem.type).ndim
            d.env[sem] = R.remote_write(b, d.env[sem], (idx, (1,) * nd, ()), value,
                                        _device_coords(b, d.env, op), True, d.active)
        elif sign > 0:
            d.env[sem] = d.masked(op.location, _sem_add(b, d.env[sem], idx, value),
                                  d.env[sem])
        else:
            d.env[sem] = _sem_take(b, d.env[sem], idx, value, d.active)
    return rule


def _semaphore_read(d, op):
    """The count; with interpret=True as an int16 holds it (JAX's generic interpreter
    keeps semaphores as int16s: two signals of 30000 read -5536). Counts are kept whole
    (a lockstep wait compares them) and wrapped where read: the same sums mod 2**16."""
    b = d.builder(op)
    sem = op.operands[0]
    a = aval_of(sem.type)
    idx = _sem_index(b, d, op, 1)
    count = _read(b, d.env[sem], idx, (1,) * a.ndim, tuple(range(a.ndim)))
    if not R.dma_counts_bytes():
        count = b.convert_element_type(b.convert_element_type(
            count, new_dtype=np.dtype(np.int16)), new_dtype=np.dtype(np.int32))
    d.env[op.results[0]] = count


@_masks_itself
def _run_scoped(d, op):
    from mjax.passes.jaxpr_discharge_state import Discharge
    from mjax.passes.jaxpr_pallas_interpret import uninitialized
    p = op.opview.params
    b = d.builder(op)
    block = op.regions[0].blocks[0]
    args = list(block.arguments)
    n = len(op.operands)
    env = {}
    for a, v in zip(args[:n], op.operands):
        env[a] = d.env[v]
    for a, s, sp in zip(args[n:], p["scratch_shapes"] or (), scratch_memory_spaces(p)):
        init = (np.zeros(s.shape, s.dtype) if sp in SEMAPHORE_SPACES
                else np.broadcast_to(uninitialized(s.dtype, p.get("uninitialized_memory")
                                                   or ""), s.shape))
        env[a] = b.constant(init)
    inner = Discharge(d.ip, env, d.grid, d.grid_ids, d.grid_bounds)
    inner.active = d.active         # (its writes masked as the enclosing run's)
    outs = inner.run(block)
    for a, v in zip(args[:n], op.operands):     # (refs the body wrote)
        if v in d.env:
            d.env[v] = env[a]
    d.env.update(zip(op.results, outs))


# pl.multiple_of: its operand everywhere but in Mosaic (a hint there: passes/mosaic/)
@lowering(P.MultipleOfOp)
def _multiple_of_lower(ctx, x, **params):
    return x


def _multiple_of_transpose(b, ct, x, **params):
    return [ct]


AD.deflinear(P.MultipleOfOp, _multiple_of_transpose)
B.defvectorized(P.MultipleOfOp)
shard_elementwise(P.MultipleOfOp)


@TRITON.register(P.MultipleOfOp)
def _multiple_of_triton(kl, op, x, **params):
    return [x]


# pltpu.roll: jnp.roll's rotation (of each slice along stride_axis, by shift + i * stride)
# where it is not Mosaic's tpu.dynamic_rotate (passes/mosaic/)
@lowering(P.RollOp)
def _roll_lower(ctx, x, shift, *, axis, stride=None, stride_axis=None):
    shape = list(ir.RankedTensorType(x.type).shape)
    if stride is None:
        return _rotated(x, shift, axis)
    parts = []
    for i in range(shape[stride_axis]):
        lo = [0] * len(shape)
        lo[stride_axis] = i
        hi = list(shape)
        hi[stride_axis] = i + 1
        part = hlo.slice(x, lo, hi, [1] * len(shape))
        step = hlo.add(shift, H.constant(np.int32(i * stride), np.int32))
        parts.append(_rotated(part, step, axis))
    return hlo.concatenate(parts, stride_axis)


def _rotated(x, shift, axis):
    """jnp.roll(x, shift, axis): a window of x twice over, at n - (shift mod n)."""
    t = ir.RankedTensorType(x.type)
    n = t.shape[axis]
    if n == 0:
        return x
    size = H.constant(np.int32(n), np.int32)
    mod = hlo.remainder(hlo.add(hlo.remainder(shift, size), size), size)
    start = hlo.subtract(size, mod)
    zero = H.constant(np.int32(0), np.int32)
    twice = hlo.concatenate([x, x], axis)
    starts = [start if d == axis else zero for d in range(t.rank)]
    return hlo.dynamic_slice(twice, starts, list(t.shape), results=[t])


@AD.jvp_rule(P.RollOp)
def _roll_jvp(b, primals, tangents, **params):
    out = b.emit(P.RollOp, *primals, **params)
    if tangents[0] is None:
        return out, [None]
    return out, b.emit(P.RollOp, tangents[0], primals[1], **params)


@AD.transpose_rule(P.RollOp)
def _roll_transpose(b, ct, x, shift, *, axis, stride=None, stride_axis=None):
    # (the inverse rotation: every slice back by its own shift)
    back = b.emit(P.RollOp, ct, b.neg(shift), axis=axis,
                  stride=None if stride is None else -stride, stride_axis=stride_axis)
    return [back[0], None]


@B.batch_rule(P.RollOp)
def _roll_batch(b, args, dims, *, axis, stride=None, stride_axis=None):
    (x, shift), (xd, sd) = args, dims
    if sd is not B.NOT_MAPPED:
        raise NotImplementedError("vmap of pltpu.roll with a shift that differs across "
                                  "the batch is not supported (JAX's roll has no "
                                  "batching rule)")
    at = (lambda a: None if a is None else a + (xd <= a))
    return b.emit(P.RollOp, x, shift, axis=at(axis), stride=stride,
                  stride_axis=at(stride_axis)), [xd]


SHARD.unsupported(P.RollOp, "pltpu.roll appears inside Pallas kernels, which sharding "
                            "propagation does not enter")
TRITON.unsupported(P.RollOp, "pltpu.roll is a TPU op; JAX's Triton lowering has no rule "
                             "for it either")



# pltpu.bitcast: interpreted as JAX's rule does, rows packed along the second-minor dim
@lowering(P.TpuBitcastOp)
def _tpu_bitcast_lower(ctx, x, *, dtype):
    a, out = ctx.avals_in[0], ctx.avals_out[0]
    src, dst = bitwidth(a.dtype), bitwidth(dtype)          # (int4: 4 bits)
    *lead, m, n = a.shape
    r = len(a.shape)
    if src < dst:           # k rows -> one: (.., m/k, k, n) -> (.., m/k, n, k) -> bitcast
        k = dst // src
        y = hlo.reshape(H.ttype((*lead, m // k, k, n), a.dtype), x)
        y = hlo.transpose(y, list(range(r - 1)) + [r, r - 1])
        return hlo.bitcast_convert(H.ttype(out.shape, dtype), y)
    if src > dst:           # one row -> k: bitcast (.., m, n, k) -> (.., m, k, n) -> reshape
        k = src // dst
        y = hlo.bitcast_convert(H.ttype((*lead, m, n, k), dtype), x)
        y = hlo.transpose(y, list(range(r - 1)) + [r, r - 1])
        return hlo.reshape(H.ttype(out.shape, dtype), y)
    return hlo.bitcast_convert(H.ttype(out.shape, dtype), x)


@B.batch_rule(P.TpuBitcastOp)
def _tpu_bitcast_batch(b, args, dims, *, dtype):
    # JAX's rule: the batched array bitcast as it is, its batch dim where it was. A batch
    # dim among the two minor ones would be packed with the rows (JAX's rule changes its
    # size there): it moves to the front first, so each example is bitcast alone
    (x,), (xd,) = args, dims
    if xd >= B.rank(x) - 2:
        x, xd = B.moveaxis(b, x, xd, 0), 0
    return b.emit(P.TpuBitcastOp, x, dtype=dtype), [xd]


for _table, _why in ((JVP, "pltpu.bitcast has no derivative (JAX's bitcast_p has no JVP "
                            "rule either)"),
                     (TRANSPOSE, "pltpu.bitcast is not linear (JAX's bitcast_p has no "
                                 "transpose rule either)"),
                     (SHARD, "pltpu.bitcast appears inside Pallas kernels, which sharding "
                             "propagation does not enter"),
                     (TRITON, "pltpu.bitcast is a TPU op; JAX's Triton lowering has no "
                              "rule for it either")):
    _table.unsupported(P.TpuBitcastOp, _why)

def _barrier_semaphore(d, op):
    _local_only(op, remote=True)
    d.env[op.results[0]] = d.builder(op).constant(np.zeros((), np.int32))


DISCHARGE_NESTED.update({
    P.GetBarrierSemaphoreOp: _barrier_semaphore,
    P.DmaStartOp: _dma_start,
    P.DmaWaitOp: _dma_wait,
    P.SemaphoreSignalOp: _semaphore(+1),
    P.SemaphoreWaitOp: _semaphore(-1),
    P.SemaphoreReadOp: _semaphore_read,
    P.RunScopedOp: _run_scoped,
})

__all__: list[str] = []


# ---- jaxpr.debug_print: a print in a kernel ---------------------------------------------
def _debug_print_discharge(b, ref, values, starts, *, callback_id, ordered, **params):
    """Interpreted, the print is its host callback, as outside kernels."""
    b.emit(CallbackOp, *values, callback_id=callback_id,
           effect="debug_ordered" if ordered else "debug", result_shapes=None,
           result_dtypes=None, vmap_method=None)
    return None, []


DISCHARGE.register(P.DebugPrintOp)(_debug_print_discharge)
_PRINT_WHY = ("a print inside a Pallas kernel becomes its host callback when the kernel "
              "is discharged (--jaxpr-pallas-interpret, vmap and jvp of the pallas_call) "
              "or Mosaic's tpu.log when it is compiled for a TPU")
for _table in (LOWER, BATCH, SHARD, JVP, TRANSPOSE):
    _table.unsupported(P.DebugPrintOp, _PRINT_WHY)
# (Triton: tt.print, passes/triton/prints.py; Mosaic: passes/mosaic/debug.py)
