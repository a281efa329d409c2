"""`--jaxpr-pallas-interpret`: each `jaxpr.pallas_call` becomes a loop over its grid.

The kernel is discharged (passes/jaxpr_discharge_state.py) into a pure function taking
the grid indices first; the call becomes a `jaxpr.while` over the flattened grid (row
major: the last grid axis moves fastest, as Pallas runs it) that, at each step, computes
the grid indices, calls each index map, slices every block out (`dynamic_slice`, a
squeezed dim reshaped away), calls the discharged kernel and writes the output blocks
(and any input block the kernel wrote) back with `dynamic_update_slice`. Scratch buffers
are carried from step to step. A grid of one point needs no loop.

Out-of-bounds blocks follow Pallas: every array is first padded up to a whole number of
blocks (NaN for floats, the minimum for integers, false for bools: JAX's
`uninitialized_value`, so reading padding shows), outputs start as such values unless
aliased to an input, and the results are cropped back to their shapes.

    %y = "jaxpr.pallas_call"(%x) {callee = @k, grid = array<i64: 2>, ...}
  ==>
    func.func private @k_interpret(%i: tensor<i32>, %x: tensor<4xf32>, %o: tensor<4xf32>)
        -> (tensor<4xf32>, tensor<4xf32>)
    %r:2 = "jaxpr.while"(%x, %c0, %init) ({...i < 2...}, {
      ^bb0(%x: tensor<8xf32>, %i: tensor<i32>, %out: tensor<8xf32>):
        %b = "jaxpr.call"(%i) {callee = @k_in0_index_map}
        %start = "jaxpr.mul"(%b, %c4)
        %xb = "jaxpr.dynamic_slice"(%x, %start) {slice_sizes = array<i64: 4>}
        ...
        %k:2 = "jaxpr.call"(%i, %xb, %ob) {callee = @k_interpret}
        %out2 = "jaxpr.dynamic_update_slice"(%out, %k#1, %start2)
        "jaxpr.yield"(%i1, %out2)})

TPU features: scalar-prefetch operands go whole to the kernel and to the index maps
(discharged too, since they read the prefetch refs) and are carried when the kernel
writes them; a dynamic grid dimension (-1, its bound an operand) makes the loop run to
the product of the bounds, passed to the kernel after the grid indices for
num_programs; semaphore scratch starts at zero. DMAs and semaphores discharge through
passes/rules/pallas_tpu.py.

JAX: pallas/hlo_interpreter.py (pallas_call_hlo_interpret).
"""
from __future__ import annotations

from typing import NamedTuple

from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.attributes import Symbol
from mjax.dialect.builder import Builder
from mjax.dialect.ops.callbacks import CallbackOp
from mjax.dialect.ops import control_flow as C
from mjax.dialect.ops import transforms as T
from mjax.dialect.ops.pallas import (DYNAMIC, SEMAPHORE_SPACES, SQUEEZED, PallasCallOp,
                                     block_sizes, element_padding, scratch_memory_spaces)
from mjax.dialect.types import ShapedArray, aval_of
from mjax.passes import analyses
from mjax.passes.interpreter import terminator
from mjax.passes.expansion import Expander
from mjax.passes.ir_util import FunctionTable, entry_block, nested_ops, replace_op
from mjax.passes.jaxpr_discharge_state import discharge_function
from mjax.passes.pallas_bounds import (IN_BLOCK, OUT_BLOCK, bounds_checked, outside,
                                      raise_if, read_padded, uninitialized)
from mjax.passes.pallas_interpret_order import iterations_per_core, parallel_orders
from mjax.passes.pallas_skip_float import skipping_float_ops
from mjax.passes.registry import Pass, PassError, register_pass
from mjax.passes.rules.pallas_remote import dma_counts_in_bytes, on_mesh


# What runs on the scratch a kernel leaves (passes/pallas_mesh.py: JAX's report of
# semaphores left non-zero, for kernels on a shard_map's devices): {"rule": (builder,
# call, final scratch values) -> None}
AT_EXIT: dict = {}
# A multi-core kernel whose cores talk to each other runs its cores in lockstep
# (passes/pallas_cores.py): {"mesh": (fns, call op) -> on_mesh's arguments or None,
# "run": (expander, _Call, arrays, builder, op) -> the final arrays}
CORES: dict = {}


def _paddings(shape, spec) -> tuple:
    """(low, high) padding per dim of an array for its spec: a blocked dim is padded at
    the end to whole blocks, an element dim by its virtual padding."""
    sizes = block_sizes(spec["block_shape"])
    return tuple(e if e is not None else (0, (-(-d // s) * s if d else s) - d)
                 for d, s, e in zip(shape, sizes, element_padding(spec)))


def _pad_to_blocks(b: Builder, x: ir.Value, spec, mode: str = "") -> ir.Value:
    a = aval_of(x.type)
    pads = _paddings(a.shape, spec)
    if not any(lo or hi for lo, hi in pads):
        return x
    fill = b.constant(uninitialized(a.dtype, mode))
    return b.pad(x, fill, padding_config=tuple((lo, hi, 0) for lo, hi in pads))


def _crop(b: Builder, x: ir.Value, shape, spec) -> ir.Value:
    if aval_of(x.type).shape == tuple(shape):
        return x
    lows = tuple(lo for lo, _ in _paddings(shape, spec))
    return b.slice(x, start_indices=lows,
                   limit_indices=tuple(lo + d for lo, d in zip(lows, shape)))


class _Call:
    """What one pallas_call needs while its loop is built. Its arrays are, in order, the
    scalar-prefetch operands (whole: the kernel and the index maps see all of each), the
    inputs and the outputs; `specs` are those of the inputs and outputs."""

    def __init__(self, fns: FunctionTable, op: ir.Operation, kernel: str, maps: dict,
                 barrier: bool = False):
        p = op.opview.params
        self.fns = fns
        self.grid = tuple(p["grid"])
        self.n_dyn = sum(1 for g in self.grid if g == DYNAMIC)
        self.bounds: list = []                # (the dynamic grid bounds where code is built)
        self.n_pre = p.get("num_scalar_prefetch") or 0
        self.specs = list(p["in_specs"]) + list(p["out_specs"])
        self.n_in = len(op.operands) - self.n_dyn     # (prefetch operands included)
        self.kernel = kernel
        self.maps = maps                      # index map -> its discharged form (prefetch)
        self.scratch = list(p["scratch_shapes"] or ())
        self.scratch_spaces = scratch_memory_spaces(p)
        if barrier:        # (the barrier semaphore: a scratch semaphore after the others)
            self.scratch.append(ShapedArray((), np.int32))
            self.scratch_spaces = (*self.scratch_spaces, "barrier_semaphore")
        disc = fns.get(kernel)
        n_refs = self.n_pre + len(self.specs) + len(self.scratch)
        rets = terminator(entry_block(disc)).operands
        args = entry_block(disc).arguments
        # Inputs the kernel writes (prefetch refs too) are carried and written back like
        # outputs.
        first = len(self.grid) + self.n_dyn
        self.written = [rets[k] != args[first + k] for k in range(n_refs)]
        # JAX's TPU interpreter (pltpu.InterpretParams; not a mesh's kernel): the order
        # it visits parallel dimensions in, the iterations each of its cores runs
        # (passes/pallas_interpret_order.py), and the inputs whose block it reloads
        # only when its index changes or a core starts, from the output buffer an
        # aliased one shares or the operand (the kernel's writes live in the block)
        self.orders = [None] * len(self.grid)
        self.per_core = None
        self.refresh: dict = {}       # input k (of the arrays) -> output array or None
        self.mode = p.get("uninitialized_memory") or ""
        self.checks = None            # (out_of_bounds_reads: JAX's block index checks)
        recorder = p.get("grid_point_recorder")
        self.recorder = -1 if recorder is None else recorder
        if p.get("dma_bytes") and not p.get("mesh_kernel"):
            self._tpu_interpreter(p)

    def _tpu_interpreter(self, p) -> None:
        self.checks = p.get("out_of_bounds_reads") or "raise"
        cp = p.get("compiler_params")
        sems = tuple((cp.get("dimension_semantics") if isinstance(cp, dict) else None) or ())
        self.orders = parallel_orders(self.grid, sems, p.get("interpret_seed") or 0)
        cores = p.get("interpret_cores") or 1
        if cores > 1 and DYNAMIC in self.grid:
            raise NotImplementedError("pltpu.InterpretParams(num_cores_or_threads > 1) with "
                                      "a dynamic grid is not supported by mjax")
        self.per_core = iterations_per_core(self.grid, sems, cores)
        aliases = dict(zip(p["input_output_aliases"][::2], p["input_output_aliases"][1::2]))
        for k in range(self.n_pre, self.n_in):
            if k in aliases:
                self.refresh[k] = self.n_in + aliases[k]
            elif self.written[k]:
                self.refresh[k] = None
        for k, j in self.refresh.items():
            self.written[k] = True
            if j is not None:
                self.written[j] = True

    def sizes(self, b: Builder) -> list:
        """Each grid dimension's size: an int, or (dynamic) its bound's value."""
        it = iter(self.bounds)
        return [next(it) if g == DYNAMIC else g for g in self.grid]

    def points(self, b: Builder):
        """The number of grid points: an int, or a value when the grid is dynamic."""
        n = int(np.prod([g for g in self.grid if g != DYNAMIC], dtype=np.int64))
        if not self.n_dyn:
            return n
        value = b.constant(np.int32(n))
        for v in self.bounds:
            value = b.mul(value, v)
        return value

    def grid_ids(self, b: Builder, i: ir.Value) -> list[ir.Value]:
        ids = []
        sizes = self.sizes(b)

        def const(v):
            return b.constant(np.int32(v)) if isinstance(v, (int, np.integer)) else v
        for d in range(len(self.grid)):
            later = sizes[d + 1:]
            static = int(np.prod([s for s in later if isinstance(s, (int, np.integer))],
                                 dtype=np.int64))
            stride = None if static == 1 else const(static)
            for s in later:
                if not isinstance(s, (int, np.integer)):
                    stride = s if stride is None else b.mul(stride, s)
            q = b.div(i, stride) if stride is not None else i
            # (i < the grid's size, so the first axis needs no remainder)
            ids.append(b.rem(q, const(sizes[d])) if d else q)
        for d, order in enumerate(self.orders):
            if order is not None and any(order != np.arange(len(order))):
                table = b.constant(order.astype(np.int32))
                ids[d] = b.reshape(b.dynamic_slice(table, ids[d], slice_sizes=(1,)),
                                   new_sizes=())
        return ids

    def index_map(self, name: str) -> str:
        """The function to call for index map @name: itself, or with scalar prefetch its
        discharged form (grid indices, prefetch values) -> (block indices, prefetch)."""
        if not self.n_pre:
            return name
        if name not in self.maps:
            new = self.fns.fresh_name(f"{name}_interpret")
            discharge_function(self.fns, name, new)
            self.maps[name] = new
        return self.maps[name]

    def starts(self, b: Builder, ids, prefetch, k: int) -> list[ir.Value]:
        spec = self.specs[k]
        ndim = len(tuple(spec["block_shape"]))
        idx = T.emit_transform(b, T.CallOp, *ids, *prefetch, signature=self.fns.signature,
                               callee=Symbol(self.index_map(str(spec["index_map"]))))
        idx = list(idx)[:ndim]
        # (an element dim's index is already the offset into the padded array)
        return [j if e is not None else b.mul(j, b.constant(np.int32(s)))
                for j, s, e in zip(idx, block_sizes(spec["block_shape"]),
                                   element_padding(spec))]

    def step(self, b: Builder, ids, arrays, scratch, reload=None) -> tuple[list, list]:
        """One grid point: slices blocks out of `arrays`, runs the kernel, writes blocks
        back; returns (new arrays, new scratch values). `reload` (in a loop, for JAX's
        TPU interpreter): (whether a core starts here, the previous point's grid
        indices, the operands of inputs reloaded from them)."""
        prefetch = list(arrays[:self.n_pre])
        starts, blocks, seen = [], [], {}
        for k, x in enumerate(arrays[self.n_pre:]):
            bs = tuple(self.specs[k]["block_shape"])
            key = (str(self.specs[k]["index_map"]), block_sizes(bs),
                   element_padding(self.specs[k]))
            if key not in seen:        # (specs sharing an index map share its call)
                seen[key] = self.starts(b, ids, prefetch, k)
            st = seen[key]
            whole = block_sizes(bs) == aval_of(x.type).shape   # (starts clamp to 0)
            if self.checks and not whole and (self.checks == "raise" or
                                               self.n_pre + k >= self.n_in):
                self._check_block(b, k, st, x, ids)
            blk = x if whole else b.dynamic_slice(x, *st, slice_sizes=block_sizes(bs))
            if reload is not None and self.n_pre + k in self.refresh:
                blk = self._reloaded(b, k, st, blk, arrays, prefetch, reload)
            if SQUEEZED in bs:
                blk = b.reshape(blk, new_sizes=tuple(s for s in bs if s != SQUEEZED))
            starts.append(st)
            blocks.append(blk)
        finals = T.emit_transform(b, T.CallOp, *ids, *self.bounds, *prefetch, *blocks, *scratch,
                                  signature=self.fns.signature, callee=Symbol(self.kernel))
        new_arrays = []
        for k, x in enumerate(arrays):
            if not self.written[k]:
                new_arrays.append(x)
                continue
            if k < self.n_pre:
                new_arrays.append(finals[k])
                continue
            j = k - self.n_pre
            bs = tuple(self.specs[j]["block_shape"])
            blk = finals[k]
            if SQUEEZED in bs:
                blk = b.reshape(blk, new_sizes=block_sizes(bs))
            if block_sizes(bs) == aval_of(x.type).shape:
                new_arrays.append(blk)
            else:
                new_arrays.append(b.dynamic_update_slice(x, blk, *starts[j]))
        return new_arrays, list(finals[len(arrays):])

    def _check_block(self, b: Builder, k, st, x, ids) -> None:
        """JAX's error for a block index past the (padded) end of operand k."""
        sizes = block_sizes(tuple(self.specs[k]["block_shape"]))
        shape = aval_of(x.type).shape
        if self.checks == "uninitialized" and self.n_pre + k < self.n_in:
            shape = tuple(d - z for d, z in zip(shape, sizes))      # (its extra block)
        is_in = self.n_pre + k < self.n_in
        index = b.constant(np.int32(k + self.n_pre if is_in else k + self.n_pre - self.n_in))
        raise_if(b, outside(b, st, sizes, shape), IN_BLOCK if is_in else OUT_BLOCK, st,
                 sizes, shape, [index, *ids])

    def _reloaded(self, b: Builder, k, st, cached, arrays, prefetch, reload):
        """Input k's block: read again from its source (the output buffer it shares,
        or its operand) where a core starts or its block index changed, else the block
        as the kernel left it (JAX's TPU interpreter copies a block in only then)."""
        first, prev_ids, operands = reload
        j = self.refresh[self.n_pre + k]
        src = arrays[j] if j is not None else operands[self.n_pre + k]
        sizes = block_sizes(tuple(self.specs[k]["block_shape"]))
        fresh = (src if sizes == aval_of(src.type).shape
                 else b.dynamic_slice(src, *st, slice_sizes=sizes))
        changed = first
        for a, c in zip(st, self.starts(b, prev_ids, prefetch, k)):
            changed = b.emit("or", changed, b.ne(a, c))[0]
        which = b.broadcast_in_dim(changed, shape=sizes, broadcast_dimensions=())
        return b.select_n(which, cached, fresh)

    def initial_scratch(self, b: Builder) -> list:
        """The scratch buffers' first values: semaphores zero, the others the
        uninitialized value."""
        return [b.constant(np.zeros(s.shape, s.dtype) if sp in SEMAPHORE_SPACES else
                           np.broadcast_to(uninitialized(s.dtype, self.mode), s.shape))
                for s, sp in zip(self.scratch, self.scratch_spaces)]

    def record(self, b: Builder, ids, i) -> None:
        """Calls pltpu.InterpretParams' grid_point_recorder (a host callback) with the
        grid point iteration `i` visits and the core running it."""
        if self.recorder < 0:
            return
        point = (b.concatenate(*(b.broadcast_in_dim(v, shape=(1,), broadcast_dimensions=())
                                 for v in ids), dimension=0)
                 if ids else b.constant(np.zeros((0,), np.int32)))
        core = (b.div(i, b.constant(np.int32(self.per_core))) if self.per_core
                else b.constant(np.int32(0)))
        b.emit(CallbackOp, point, core, callback_id=self.recorder, effect="ordered",
               result_shapes=None, result_dtypes=None, vmap_method=None)

    def core_start(self, b: Builder, i) -> ir.Value:
        """Whether iteration `i` is the first of a core's (JAX's TPU interpreter)."""
        zero = b.constant(np.int32(0))
        if self.per_core is None:
            return b.eq(i, zero)
        return b.eq(b.rem(i, b.constant(np.int32(self.per_core))), zero)


class Discharged(NamedTuple):
    """What a kernel's discharged form depends on: expand_pallas_call's cache key."""
    callee: str
    grid: tuple
    in_bytes: bool        # DMA semaphores count bytes (pltpu.InterpretParams)
    cores: tuple | None   # the talking cores' mesh (passes/pallas_cores.py), or None
    checks: tuple | None  # bounds checks (passes/pallas_bounds.py), or None
    skip: bool            # float ops skipped (passes/pallas_skip_float.py)


def discharge_options(p) -> tuple:
    """(bounds checks, whether float ops are skipped) a pallas_call with params `p` is
    discharged with: JAX's TPU interpreter (DMAs counted in bytes) checks bounds with its
    (out_of_bounds_reads, uninitialized_memory)."""
    checks = ((p.get("out_of_bounds_reads") or "raise", p.get("uninitialized_memory") or "")
              if p.get("dma_bytes") else None)
    return checks, bool(p.get("skip_floating_point_ops"))


def expand_pallas_call(fns: FunctionTable, op: ir.Operation, cache: dict,
                       ex=None) -> None:
    """Replaces the call `op` by its grid loop; `ex` (an Expander over `fns`'s module:
    its `fns`) batches a multi-core kernel's cores in lockstep."""
    view = op.opview
    p = view.params
    callee, grid = str(p["callee"]), tuple(p["grid"])
    in_bytes = bool(p.get("dma_bytes", False))
    cores = CORES["mesh"](fns, op) if "mesh" in CORES else None
    checks, skip = discharge_options(p)
    key = Discharged(callee, grid, in_bytes, cores, checks, skip)
    if key not in cache:
        name = fns.fresh_name(f"{callee}_interpret")
        source = skipping_float_ops(fns, callee) if skip else callee
        kernel = _barrier_as_scratch(fns, source)
        mesh = (nullcontext() if cores is None else   # (the cores' kernel: the one run)
                on_mesh(cores[0], cores[1], (*cores[2][:2], kernel or source)))
        with dma_counts_in_bytes(in_bytes), mesh, bounds_checked(checks):
            discharge_function(fns, kernel or source, name, grid=grid)
        for copy in (kernel, source if skip else None):
            if copy is not None:
                fns.erase(copy)
        cache[key] = (name, kernel is not None)
    call = _Call(fns, op, cache[key][0], cache.setdefault("index_maps", {}),
                 cache[key][1])
    b = Builder(ir.InsertionPoint(op), op.location)
    out_avals = [aval_of(r.type) for r in op.results]
    # (alias input indices count the operands after the dynamic grid bounds)
    aliases = dict(zip(p["input_output_aliases"][1::2], p["input_output_aliases"][::2]))
    bounds = list(op.operands)[:call.n_dyn]
    operands = list(op.operands)[call.n_dyn:]
    call.bounds = bounds
    arrays = []
    mode = call.mode
    for k, x in enumerate(operands):
        x = x if k < call.n_pre else _pad_to_blocks(b, x, call.specs[k - call.n_pre], mode)
        if k >= call.n_pre and call.checks == "uninitialized":
            # (a block read past the end gets the uninitialized value: one more block)
            x = read_padded(b, x, block_sizes(call.specs[k - call.n_pre]["block_shape"]),
                            mode)
        arrays.append(x)
    for j, a in enumerate(out_avals):
        spec = call.specs[call.n_in - call.n_pre + j]
        if j in aliases:
            arrays.append(_pad_to_blocks(b, operands[aliases[j]], spec, mode))
        else:
            padded = tuple(lo + d + hi for d, (lo, hi) in zip(a.shape, _paddings(a.shape, spec)))
            arrays.append(b.constant(np.broadcast_to(uninitialized(a.dtype, mode), padded)))
    scratch = call.initial_scratch(b)
    n_points = call.points(b)
    if cores is not None:
        if ex is None or ex.fns is not fns:
            raise ValueError("expand_pallas_call: a multi-core kernel whose cores talk "
                             "needs an Expander over the same function table")
        arrays = CORES["run"](ex, call, arrays, b, op)
    elif isinstance(n_points, int) and n_points == 1:
        zero = b.constant(np.int32(0))
        call.record(b, [zero] * len(grid), zero)
        arrays, scratch = call.step(b, [zero] * len(grid), arrays, scratch)
    elif not isinstance(n_points, int) or n_points > 0:
        arrays, scratch = _grid_loop(b, call, arrays, scratch, n_points, op.location)
    if "rule" in AT_EXIT and cores is None:
        AT_EXIT["rule"](b, call, scratch)
    # With `shared_aliases` an output aliased to an input is that input's buffer: where
    # the kernel wrote the input's ref and not the output's (pl.core_map's kernels write
    # the refs they close over through the inputs), the output is what the input's ref
    # holds. (JAX's interpret=True keeps them apart: the output keeps the input's value.)
    finals = list(arrays[call.n_in:])
    for j, i in aliases.items() if p["shared_aliases"] else ():
        if call.written[i] and not call.written[call.n_in + j]:
            finals[j] = arrays[i]
    outs = [_crop(b, x, a.shape, spec)
            for x, a, spec in zip(finals, out_avals, call.specs[call.n_in - call.n_pre:])]
    replace_op(op, outs)


def _barrier_as_scratch(fns: FunctionTable, callee: str) -> str | None:
    """A copy of the kernel @callee whose barrier semaphore is one more ref argument (a
    scratch semaphore carried from grid step to grid step, as JAX's interpreter keeps
    one per collective id), every get_barrier_semaphore at its top level replaced by
    it; None where it takes none (or takes one inside a loop or branch: each such op
    is a semaphore of its own, living for the grid step)."""
    fn = fns.get(callee)
    entry = entry_block(fn)
    ops = [op for op in nested_ops(fn) if op.name == "jaxpr.get_barrier_semaphore"]
    if not ops or any(op.block != entry for op in ops):
        return None
    name = fns.fresh_name(f"{callee}_barrier")
    with ir.InsertionPoint.after(fn):
        new = fn.clone()
    new.attributes["sym_name"] = ir.StringAttr.get(name)
    fns.table[name] = new
    block = entry_block(new)
    sem = block.add_argument(ops[0].results[0].type, fn.location)
    kind = ir.FunctionType(ir.TypeAttr(new.attributes["function_type"]).value)
    new.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [*kind.inputs, sem.type], list(kind.results)))
    for op in [op for op in nested_ops(new) if op.name == "jaxpr.get_barrier_semaphore"]:
        op.results[0].replace_all_uses_with(sem)
        op.erase()
    return name


def _grid_loop(b: Builder, call: _Call, arrays, scratch, n_points, loc) -> list:
    """A jaxpr.while over the flattened grid (`n_points`: an int, or a value for a
    dynamic grid); gives the final arrays."""
    carried = [k for k in range(len(arrays)) if call.written[k]]
    bounds = list(call.bounds)
    sources = [k for k, j in call.refresh.items() if j is None]
    consts = bounds + [arrays[k] for k in range(len(arrays)) if not call.written[k]] + \
        [arrays[k] for k in sources]
    cond_consts = [] if isinstance(n_points, int) else [n_points]
    i32 = ShapedArray((), np.int32)
    init = [b.constant(np.int32(0))] + [arrays[k] for k in carried] + list(scratch)
    carry_types = [v.type for v in init]
    with loc:
        holder = ir.Operation.create("mjax.region_holder", regions=2, ip=b.ip)
    cond = ir.Block.create_at_start(holder.regions[0],
                                    [v.type for v in cond_consts] + carry_types)
    cb = Builder(ir.InsertionPoint(cond), loc)
    limit = (cb.constant(np.int32(n_points)) if not cond_consts
             else cond.arguments[0])
    pred = cb.lt(cond.arguments[len(cond_consts)], limit)
    with loc:
        ir.Operation.create("jaxpr.yield", operands=[pred], ip=cb.ip)
    body = ir.Block.create_at_start(holder.regions[1], [v.type for v in consts] + carry_types)
    bb = Builder(ir.InsertionPoint(body), loc)
    args = list(body.arguments)
    const_args, i, rest = args[:len(consts)], args[len(consts)], args[len(consts) + 1:]
    call.bounds = const_args[:len(bounds)]
    cur, it_c, it_r = [], iter(const_args[len(bounds):]), iter(rest[:len(carried)])
    for k in range(len(arrays)):
        cur.append(next(it_r) if call.written[k] else next(it_c))
    operands = dict(zip(sources, it_c))
    sc = list(rest[len(carried):])
    reload = None
    if call.refresh or call.per_core:
        first = call.core_start(bb, i)
        prev = bb.max(bb.sub(i, bb.constant(np.int32(1))), bb.constant(np.int32(0)))
        reload = (first, call.grid_ids(bb, prev), operands)
        if call.per_core:           # (each core's scratch starts afresh)
            sc = [bb.select_n(bb.broadcast_in_dim(first, shape=aval_of(v.type).shape,
                                                  broadcast_dimensions=()), v, init)
                  for v, init in zip(sc, call.initial_scratch(bb))]
    ids = call.grid_ids(bb, i)
    call.record(bb, ids, i)
    new_arrays, new_scratch = call.step(bb, ids, cur, sc, reload)
    call.bounds = bounds
    nxt = bb.add(i, bb.constant(np.int32(1)))
    with loc:
        ir.Operation.create("jaxpr.yield", operands=[nxt] + [new_arrays[k] for k in carried]
                            + list(new_scratch), ip=bb.ip)
    op = C.WhileOp.build(cond_consts + consts + init,
                         [i32] + [aval_of(v.type) for v in init[1:]],
                         {"cond_nconsts": len(cond_consts), "body_nconsts": len(consts)},
                         [cond, body], loc=loc, ip=b.ip)
    holder.erase()
    results = list(op.results)[1:]
    out, it = [], iter(results)
    for k in range(len(arrays)):
        out.append(next(it) if call.written[k] else arrays[k])
    return out, list(it)


def _has_kernels(module) -> bool:
    """Whether the module may hold a pallas_call: from the op names the pipeline's passes
    share (passes/analyses.py), so the walk is the one jaxpr-inline asks for next, and
    no function type is printed."""
    return PallasCallOp.OPERATION_NAME in analyses.op_names(module)


class InterpretOnlyError(PassError, ValueError):
    """A pallas_call with interpret=False compiled for a backend with no kernel compiler
    (JAX raises ValueError there)."""


def _compiler_missing(op, platform: str) -> PassError:
    """The error for a kernel with interpret=False on a platform with no Pallas compiler
    here: JAX's ValueError on the CPU, a NotImplementedError elsewhere."""
    if platform == "cpu":
        return InterpretOnlyError(op, "Only interpret mode is supported on CPU backend. "
                                      "(pallas_call(..., interpret=True))")
    return PallasCompilerMissing(op, f"pallas_call with interpret=False on the "
                                     f"'{platform}' platform: mjax has no Pallas compiler "
                                     f"for it in this build; pass interpret=True to run "
                                     f"the kernel in interpret mode")


class PallasCompilerMissing(PassError, NotImplementedError):
    """A pallas_call with interpret=False for a platform whose Pallas compiler mjax
    lacks."""


@register_pass("jaxpr-pallas-interpret")
@dataclass
class JaxprPallasInterpretPass(Pass):
    """Expand every jaxpr.pallas_call into a loop over its grid (Pallas interpret mode).
    With `platform=<name>`, a call with interpret=false is an error: that platform has
    no Pallas compiler here (CPUs have none in JAX either: the user asks for the
    interpreter)."""

    platform: str = ""

    def run(self, module: ir.Module) -> None:
        if not _has_kernels(module):    # (a cheap check: this pass runs on every compile)
            analyses.preserve(module)      # (the module stays as it is)
            return
        calls = [op for op in nested_ops(module) if op.name == PallasCallOp.OPERATION_NAME]
        if not calls:
            analyses.preserve(module)
            return
        if self.platform:
            for op in calls:
                if not op.opview.params.get("interpret", False):
                    raise _compiler_missing(op, self.platform)
        # (an Expander batches a multi-core kernel's cores: its function table is ours)
        ex = (Expander(module) if any(op.opview.params.get("mesh_kernel") for op in calls)
              else None)
        fns = ex.fns if ex is not None else FunctionTable(module)
        cache: dict = {}
        for op in calls:
            expand_pallas_call(fns, op, cache, ex)


__all__ = ["InterpretOnlyError", "JaxprPallasInterpretPass", "PallasCompilerMissing",
           "Discharged", "discharge_options", "expand_pallas_call", "uninitialized"]
