"""What a Pallas kernel calls: grid queries, loads and stores (masked), atomics, dot,
`when` and `loop`. JAX: pallas/primitives.py and pallas/helpers.py.
"""
from __future__ import annotations

import threading

import numpy as np

from mjax import lax
from mjax.callbacks import debug
from mjax import numpy as jnp
from mjax.tracing.core import aval_of_value, bind
from mjax.dialect.values import defining_op, set_attr
from mjax.dialect.ops import pallas_tpu as P
from mjax.dialect.ops import state as S
from mjax.dialect.types import ShapedArray
from mjax.experimental.pallas.ref import Ref, ReshapedRef, as_ref


# ---- the kernel being traced ------------------------------------------------------------
class _Kernels(threading.local):
    def __init__(self):
        self.stack: list = []


_kernels = _Kernels()
# (jax.debug.print in a kernel stages a kernel print: mjax.debug asks through this)
debug.IN_KERNEL.append(lambda: bool(_kernels.stack))


class KernelContext:
    """The kernel being traced: its trace and grid. Grid queries are emitted once, at the
    kernel's top level (loop bodies and branches capture them), so they never sit inside
    an isolated region."""

    def __init__(self, trace, grid):
        self.trace = trace
        self.grid = tuple(grid)
        self.queries: dict = {}
        # (indices, grid) of each pltpu.emit_pipeline body being traced, innermost last:
        # program_id/num_programs there answer for the pipeline's grid, as JAX's
        self.pipelines: list = []
        # id(buffer tracer) -> (tracer, memory space name or None for a default block):
        # emit_pipeline copies blocks of refs outside VMEM into VMEM buffers, as JAX's
        self.memory_spaces: dict = {}
        # The pltpu.InterpretParams the kernel is interpreted with (JAX's TPU
        # interpreter), else None: what that interpreter refuses is refused as it does
        self.interpret_params = None

    def note_memory_spaces(self, tracers, spaces) -> None:
        for t, space in zip(tracers, spaces):
            self.memory_spaces[id(t)] = (t, space)

    def memory_space(self, ref: Ref) -> str | None:
        hit = self.memory_spaces.get(id(ref.tracer))
        return None if hit is None else hit[1]

    def __enter__(self):
        _kernels.stack.append(self)
        return self

    def __exit__(self, *exc):
        _kernels.stack.pop()

    def query(self, cls, axis: int):
        key = (cls, axis)
        hit = self.queries.get(key)
        if hit is None:
            aval = ShapedArray((), np.int32)
            hit = self.trace.emit(cls, [], {"axis": axis}, [aval])[0]
            self.queries[key] = hit
        return hit


def current_kernel(what: str) -> KernelContext:
    if not _kernels.stack:
        raise ValueError(f"{what} can only be called inside a Pallas kernel (a function "
                         f"run by pl.pallas_call)")
    return _kernels.stack[-1]


def _grid_axis(what: str, axis) -> tuple[KernelContext, int]:
    ctx = current_kernel(what)
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{what} axis must be a static integer, got {axis!r}")
    grid = ctx.pipelines[-1][1] if ctx.pipelines else ctx.grid
    if not 0 <= axis < len(grid):
        raise ValueError(f"{what}: axis {axis} is out of range for the grid {grid} of "
                         f"rank {len(grid)}")
    return ctx, int(axis)


def program_id(axis: int):
    """This kernel instance's position along grid axis `axis` (an int32 scalar); in an
    emit_pipeline body, the pipeline step's. JAX: pl.program_id."""
    ctx, axis = _grid_axis("program_id", axis)
    if ctx.pipelines:
        return ctx.pipelines[-1][0][axis]
    return ctx.query(S.ProgramIdOp, axis)


def num_programs(axis: int):
    """The grid's size along `axis` (in an emit_pipeline body, the pipeline's): a Python
    int where the grid is static (as JAX's), else an int32 scalar read at run time.
    JAX: pl.num_programs."""
    ctx, axis = _grid_axis("num_programs", axis)
    if ctx.pipelines:
        size = ctx.pipelines[-1][1][axis]
        return int(size) if isinstance(size, (int, np.integer)) else size
    size = ctx.grid[axis]
    if isinstance(size, (int, np.integer)) and size >= 0:
        return int(size)
    return ctx.query(S.NumProgramsOp, axis)


# ---- loads and stores ----------------------------------------------------------------------
def _value_aval(ref: Ref, params) -> ShapedArray:
    shape = tuple(s for d, s in enumerate(params["sizes"]) if d not in params["squeezed"])
    return ShapedArray(shape, ref.dtype)


def _coerce(what: str, value, aval: ShapedArray, fn: str):
    """`value` as an array of `aval`'s shape and dtype: scalars and weakly typed values
    take the ref's dtype, shapes broadcast; other dtype mismatches are errors, as in JAX."""
    if isinstance(value, (Ref, ReshapedRef)):     # (not read through __jax_array__)
        raise ValueError(f"Cannot store a Ref into another Ref: `{fn}` was given "
                         f"{value!r} as its {what}; did you mean to read it ([...])?")
    v_aval = aval_of_value(value)
    if v_aval.dtype != aval.dtype:
        if not v_aval.weak_type:
            raise ValueError(f"Invalid dtype for `{fn}`. Ref dtype: {np.dtype(aval.dtype)}. "
                             f"Value dtype: {np.dtype(v_aval.dtype)}.")
        value = lax.convert_element_type(value, aval.dtype)
    if v_aval.shape != aval.shape:
        try:
            np.broadcast_shapes(v_aval.shape, aval.shape)
            if np.broadcast_shapes(v_aval.shape, aval.shape) != aval.shape:
                raise ValueError
        except ValueError:
            raise ValueError(f"Invalid shape for `{fn}`. Ref shape: {aval.shape}. "
                             f"Value shape: {v_aval.shape}.") from None
        value = jnp.broadcast_to(value, aval.shape)
    return value


def _mask(mask, aval: ShapedArray, fn: str):
    m = aval_of_value(mask)
    if np.dtype(m.dtype) != np.bool_:
        raise TypeError(f"{fn} mask must be a boolean array, got {m.str_short()}")
    try:
        if np.broadcast_shapes(m.shape, aval.shape) != aval.shape:
            raise ValueError
    except ValueError:
        raise ValueError(f"{fn} mask of shape {m.shape} does not broadcast to the indexed "
                         f"shape {aval.shape}") from None
    return jnp.broadcast_to(mask, aval.shape) if m.shape != aval.shape else mask


def interpreting() -> bool:
    """Whether the kernel being traced runs in interpret mode (either interpreter)."""
    return bool(_kernels.stack) and bool(getattr(_kernels.stack[-1], "interpret", False))


def tpu_interpreting() -> bool:
    """Whether the kernel being traced runs in JAX's TPU interpret mode."""
    return bool(_kernels.stack) and _kernels.stack[-1].interpret_params is not None


def check_not_hbm(ref, primitive: str) -> None:
    """JAX's TPU interpreter refuses a direct read or write of an HBM or ANY buffer
    (naming its primitive: get_p, load_p, swap_p); a kernel copies those with DMAs."""
    ctx = _kernels.stack[-1] if _kernels.stack else None
    if ctx is None or ctx.interpret_params is None or not isinstance(ref, Ref):
        return
    if ctx.memory_space(ref) in ("hbm", "any"):
        raise ValueError(f"{primitive}: Buffers with a memory space of HBM or ANY cannot "
                         f"be referenced directly. Instead, use `pltpu.sync_copy` or "
                         f"`pltpu.async_copy`.")


def load(x_ref_or_view, idx=..., *, mask=None, other=None, cache_modifier=None,
         eviction_policy=None, volatile=False, _primitive="get_p"):
    """Reads `ref[idx]`; with `mask`, elements where it is False come from `other`
    (zero if not given) and are never read. JAX: pl.load."""
    if isinstance(x_ref_or_view, ReshapedRef):       # (pltpu.load of ref.bitcast(...))
        _unmasked_view(x_ref_or_view, mask, "load")
        return x_ref_or_view[idx]
    ref = as_ref(x_ref_or_view, "load")
    check_not_hbm(ref, _primitive)
    starts, params = ref.op_args(idx)
    aval = _value_aval(ref, params)
    if mask is None:
        return _chained(ref, idx, bind(S.RefGetOp, ref.tracer, *starts, **params))
    mask = _mask(mask, aval, "load")
    other = _coerce("other", 0 if other is None else other, aval, "load")
    return _chained(ref, idx, bind(S.MaskedLoadOp, ref.tracer, mask, other, *starts,
                                   **params))


CHAINED_VIEW = "mjax.chained_view"


def _chained(ref, idx, out):
    """`out` (a ref op's result), its op noted with the windows JAX keeps apart when the
    access goes through chained views (Ref.chain_args; attribute CHAINED_VIEW: the TPU
    lowering slices once per window, as JAX's; every other reader sees the folded
    window the op's starts and sizes give)."""
    chain = ref.chain_args(idx)
    value = getattr(out, "value", None)
    if chain is None or value is None:
        return out
    op = defining_op(value)
    if op is not None:
        set_attr(op, CHAINED_VIEW, chain)
    return out


def swap(x_ref_or_view, idx, val, *, mask=None, eviction_policy=None, _function_name="swap"):
    """Writes `val` into `ref[idx]` (where `mask` holds); returns the old value.
    JAX: pl.swap."""
    if isinstance(x_ref_or_view, ReshapedRef):
        _unmasked_view(x_ref_or_view, mask, _function_name)
        return x_ref_or_view.swap(idx, val)
    ref = as_ref(x_ref_or_view, _function_name)
    check_not_hbm(ref, "swap_p")
    starts, params = ref.op_args(idx)
    aval = _value_aval(ref, params)
    val = _coerce("value", val, aval, _function_name)
    if mask is None:
        return _chained(ref, idx, bind(S.RefSwapOp, ref.tracer, val, *starts, **params))
    mask = _mask(mask, aval, _function_name)
    return _chained(ref, idx, bind(S.MaskedSwapOp, ref.tracer, val, mask, *starts,
                                   **params))


def _unmasked_view(view, mask, what):
    """A reshaped or bitcast view is read and written whole or through an index, as
    `view[idx]` (JAX: pl.load/pl.store without a mask are ref[idx]); masks are not."""
    if mask is not None:
        raise NotImplementedError(
            f"a masked {what} through {view!r}: mjax's Pallas reads and writes reshaped "
            f"and bitcast views without masks; select the value with jnp.where instead")


def store(x_ref_or_view, idx, val, *, mask=None, eviction_policy=None) -> None:
    """Writes `val` into `ref[idx]` where `mask` holds. JAX: pl.store."""
    swap(x_ref_or_view, idx, val, mask=mask, _function_name="store")


def addupdate(x_ref_or_view, idx, val) -> None:
    """`ref[idx] += val`. JAX: state.addupdate."""
    ref = as_ref(x_ref_or_view, "addupdate")
    starts, params = ref.op_args(idx)
    val = _coerce("value", val, _value_aval(ref, params), "addupdate")
    bind(S.RefAddUpdateOp, ref.tracer, val, *starts, **params)


def atomic_rmw(x_ref_or_view, idx, val, *, mask=None, kind: str):
    """ref[idx] = kind(ref[idx], val) atomically where `mask` holds; returns the old
    value. JAX: the atomic_* functions of the Triton backend."""
    ref = as_ref(x_ref_or_view, f"atomic_{kind}")
    starts, params = ref.op_args(idx)
    aval = _value_aval(ref, params)
    val = _coerce("value", val, aval, f"atomic_{kind}")
    mask = jnp.ones(aval.shape, bool) if mask is None else _mask(mask, aval, f"atomic_{kind}")
    return bind(S.AtomicRmwOp, ref.tracer, val, mask, *starts, kind=kind, **params)


def atomic_add(x_ref_or_view, idx, val, *, mask=None):
    """Atomically `ref[idx] += val` (where `mask` holds); returns the old value."""
    return atomic_rmw(x_ref_or_view, idx, val, mask=mask, kind="add")


def atomic_max(x_ref_or_view, idx, val, *, mask=None):
    return atomic_rmw(x_ref_or_view, idx, val, mask=mask, kind="max")


def atomic_min(x_ref_or_view, idx, val, *, mask=None):
    return atomic_rmw(x_ref_or_view, idx, val, mask=mask, kind="min")


def atomic_and(x_ref_or_view, idx, val, *, mask=None):
    return atomic_rmw(x_ref_or_view, idx, val, mask=mask, kind="and")


def atomic_or(x_ref_or_view, idx, val, *, mask=None):
    return atomic_rmw(x_ref_or_view, idx, val, mask=mask, kind="or")


def atomic_xor(x_ref_or_view, idx, val, *, mask=None):
    return atomic_rmw(x_ref_or_view, idx, val, mask=mask, kind="xor")


def atomic_xchg(x_ref_or_view, idx, val, *, mask=None):
    return atomic_rmw(x_ref_or_view, idx, val, mask=mask, kind="xchg")


# ---- math and control ------------------------------------------------------------------------
def dot(a, b, trans_a: bool = False, trans_b: bool = False, allow_tf32=None,
        precision=None):
    """a @ b over the last two axes (leading axes batched), optionally transposing
    either; float inputs accumulate in float32, integers in int32. JAX: pl.dot."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    if a.ndim != b.ndim or a.ndim not in (2, 3):
        raise ValueError(f"pl.dot takes two 2-D (or two batched 3-D) arrays, got shapes "
                         f"{a.shape} and {b.shape}")
    if trans_a:
        a = jnp.swapaxes(a, -1, -2)
    if trans_b:
        b = jnp.swapaxes(b, -1, -2)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"pl.dot contracting dimensions differ: {a.shape} @ {b.shape}")
    inexact = jnp.issubdtype(jnp.result_type(a, b), jnp.inexact)
    out = np.float32 if inexact else np.int32
    batch = ((0,), (0,)) if a.ndim == 3 else ((), ())
    return lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 2,)), batch),
                           precision=precision, preferred_element_type=out)


def when(condition):
    """Decorator: runs the function when `condition` holds (a Python bool decides now; a
    traced one becomes a lax.cond). JAX: pl.when."""
    def wrapped(f):
        if isinstance(condition, (bool, np.bool_)):
            if condition:
                f()
            return
        lax.cond(condition, f, lambda: None)
    return wrapped


def loop(lower, upper, *, init_carry=None, step=1, unroll=None):
    """Decorator: runs body(i) (or carry = body(i, carry) with `init_carry`) for i in
    range(lower, upper, step); returns the final carry. JAX: pl.loop."""

    def wrapped(body):
        concrete = all(isinstance(v, (int, np.integer)) for v in (lower, upper, step))
        if concrete:
            trips = max(0, -(-(upper - lower) // step))
        else:
            trips = lax.div(upper - lower + step - 1, step)

        def run(k, carry):
            i = lower + k * step
            if init_carry is None:
                body(i)
                return carry
            return body(i, carry)
        return lax.fori_loop(0, trips, run, init_carry, unroll=unroll)
    return wrapped


def multiple_of(x, values):
    """A hint that `x` is a multiple of each of `values` (an int or ints); returns `x`
    (Mosaic's tpu.assume_multiple). JAX: pl.multiple_of."""
    values = (values,) if isinstance(values, (int, np.integer)) else tuple(values)
    return bind(P.MultipleOfOp, x, values=tuple(int(v) for v in values))


def max_contiguous(x, values):
    """A hint that `x` holds contiguous runs; returns `x`."""
    return x


def debug_print(fmt: str, *args):
    """Prints from inside a kernel: all scalars (placeholders `{}` only for 32-bit
    integers; without placeholders the values follow the text) or one vector (the text
    ending in `{}`). Compiled for a TPU, Mosaic's tpu.log; interpreted, a host callback.
    JAX: pl.debug_print."""
    debug.print(fmt, *args, skip_format_check=True)


__all__ = ["KernelContext", "addupdate", "atomic_add", "atomic_and", "atomic_max",
           "atomic_min", "atomic_or", "atomic_rmw", "atomic_xchg", "atomic_xor",
           "current_kernel", "debug_print", "dot", "load", "loop", "max_contiguous",
           "multiple_of", "num_programs", "program_id", "store", "swap", "when"]
