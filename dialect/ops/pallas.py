"""`jaxpr.pallas_call`: runs a Pallas kernel (a private function over refs) over a grid.

    %outs = "jaxpr.pallas_call"(%idx, %a, %b) {
        callee = @kernel, name = "kernel", grid = array<i64: 4, 2>,
        num_scalar_prefetch = 1,
        in_specs = [{block_shape = array<i64: 8, 128>, index_map = @kernel_in0_index_map}, ...],
        out_specs = [{block_shape = ..., index_map = ..., memory_space = "any"}, ...],
        scratch_shapes = [memref<8x128xf32>, memref<2xi32>, ...],
        scratch_memory_spaces = ["vmem", "dma_semaphore", ...],
        input_output_aliases = array<i64: ...>,      // flattened (input, output) pairs
        interpret = true,
        compiler_params = {dimension_semantics = ["parallel", "arbitrary"], ...},
        cost_estimate = {flops = 1024, transcendentals = 0, bytes_accessed = 4096}
    } : (...) -> (...)

Operands: first one i32 scalar per dynamic grid dimension (a -1 in `grid`, in order: the
grid's bound there, JAX's dynamic grid bounds), then the `num_scalar_prefetch`
scalar-prefetch operands (JAX's PrefetchScalarGridSpec; integer arrays the index maps
may read; they have no spec), then one operand per entry of `in_specs`. Results: one
per entry of `out_specs`. `input_output_aliases` count operands after the dynamic grid
bounds (as the user's arguments: scalar-prefetch operands, then inputs).

The kernel `@callee` takes refs in JAX's order: the scalar-prefetch operands (whole,
`memref` of the operand's shape; SMEM on a TPU), one per input block, one per output
block, then the scratch buffers; it returns nothing. An index map is a private function
from the grid indices (i32 scalars) and then the scalar-prefetch refs (memrefs, read with
`jaxpr.ref_get`) to block indices (i32 scalars, one per array dim); the element offset
along dim d is index * block size. A block size of -1 is JAX's `None` (a squeezed dim of
size 1 that the kernel's ref does not have). A spec's optional `element_padding` marks
element dims (JAX's pl.Element): their index maps give element offsets into the array
padded by (low, high) (see element_padding).

Memory spaces (strings, MEMORY_SPACES): a spec's optional `memory_space` ("any", "vmem",
"smem", "hbm", ...; absent: the backend's default, VMEM on a TPU) and, per scratch
buffer, `scratch_memory_spaces` (absent: all "vmem"). A spec in "any"/"hbm" hands the
kernel the whole array (block_shape = the array's shape) for DMAs. Semaphores are
scratch buffers of i32 counters whose memory space names their kind: "semaphore"
(pltpu.SemaphoreType.REGULAR), "dma_semaphore" (DMA), "barrier_semaphore" (BARRIER); all
three live in Mosaic's `semaphore_mem`. A spec's optional `buffer_count` is its
pl.Buffered pipeline mode. A spec's optional `key_dims` (n > 0) says the operand is an
array of PRNG keys passed as its key data: its last n dims hold each key's words
(whole, at block index 0; Mosaic's transform function returns one zero for them, as
JAX's does for an extended dtype's trailing dims).

`compiler_params` is a dictionary of the backend's parameters as plain attributes: for
the TPU (pltpu.CompilerParams) every field that is not None, with `dimension_semantics`
as strings ("parallel", "arbitrary", "core_parallel", "subcore_parallel"),
`allow_input_fusion` as booleans, `has_side_effects` as a bool or a SideEffectType
value string and `flags` as a dictionary, plus `backend = "mosaic_tpu"`; for Triton
`num_warps`/`num_stages`. `cost_estimate` is pl.CostEstimate's three integers.
`metadata` is pallas_call's metadata dictionary (strings), the TPU custom call's
`kernel_metadata`.

Lowered by `--jaxpr-pallas-interpret` (a loop over the grid; DMAs are copies and
semaphores counters, dialect/ops/pallas_tpu.py), on GPUs by `--jaxpr-pallas-to-triton`,
on TPUs by `--jaxpr-pallas-to-mosaic`. JAX: pallas_call_p.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect.core import InferError, JaxprOp
from mjax.dialect.ops.transforms import module_signatures
from mjax.dialect.types import RefAval, ShapedArray, aval_of

SQUEEZED = -1   # block_shape entry of a squeezed dim (JAX's None / pl.squeezed)
DYNAMIC = -1    # grid entry of a dynamic dimension (its bound is an operand)
DIMENSION_SEMANTICS = ("parallel", "arbitrary", "core_parallel", "subcore_parallel")
COST_FIELDS = ("flops", "transcendentals", "bytes_accessed")


def block_ref_shape(block_shape) -> tuple[int, ...]:
    """The kernel ref's shape for a block shape (squeezed dims dropped)."""
    return tuple(int(b) for b in block_shape if b != SQUEEZED)


def block_sizes(block_shape) -> tuple[int, ...]:
    """The block's extent per array dim (1 for a squeezed dim)."""
    return tuple(1 if b == SQUEEZED else int(b) for b in block_shape)


def element_padding(spec) -> tuple:
    """Per array dim of a spec: None for a blocked dim (the index map gives a block
    index), or the (low, high) virtual padding of an element dim (the index map gives
    an element offset into the padded array; JAX's pl.Element). A spec holding element
    dims says so with `element_padding = array<i64: lo0, hi0, lo1, hi1, ...>`, -1, -1
    for its blocked dims."""
    n = len(tuple(spec["block_shape"]))
    pads = tuple(spec.get("element_padding", None) or (-1,) * (2 * n))
    return tuple(None if lo < 0 else (int(lo), int(hi))
                 for lo, hi in zip(pads[::2], pads[1::2]))


_SPEC_REQUIRED = frozenset({"block_shape", "index_map"})
_SPEC_OPTIONAL = frozenset({"element_padding", "memory_space", "buffer_count", "key_dims"})

# Memory spaces a spec or scratch buffer may name (JAX: pl.MemorySpace and
# pltpu.MemorySpace values); the semaphore kinds are scratch-only.
MEMORY_SPACES = ("any", "vmem", "smem", "hbm", "vmem_shared", "cmem", "host",
                 "semaphore_mem")
SEMAPHORE_SPACES = ("semaphore", "dma_semaphore", "barrier_semaphore")


def _spec_list(what: str, specs) -> list[dict]:
    specs = list(specs or ())
    for i, s in enumerate(specs):
        if (not isinstance(s, dict) or not _SPEC_REQUIRED <= set(s)
                or not set(s) <= _SPEC_REQUIRED | _SPEC_OPTIONAL
                or not isinstance(s["index_map"], A.Symbol)):
            raise TypeError(f"{what}[{i}] must be a dictionary {{block_shape = array<i64: "
                            f"...>, index_map = @fn}} (and optionally element_padding = "
                            f"array<i64: ...>, memory_space = \"...\", buffer_count = n), "
                            f"got {s!r}")
        if not all(isinstance(b, int) for b in tuple(s["block_shape"])):
            raise TypeError(f"{what}[{i}] block_shape must be integers, got "
                            f"{s['block_shape']!r}")
        if "memory_space" in s and s["memory_space"] not in MEMORY_SPACES:
            raise TypeError(f"{what}[{i}] memory_space {s['memory_space']!r} must be one "
                            f"of {', '.join(MEMORY_SPACES)}")
        if "buffer_count" in s and not (isinstance(s["buffer_count"], int)
                                        and not isinstance(s["buffer_count"], bool)
                                        and s["buffer_count"] >= 1):
            raise TypeError(f"{what}[{i}] buffer_count must be a positive integer, got "
                            f"{s['buffer_count']!r}")
        if "key_dims" in s and not (isinstance(s["key_dims"], int)
                                    and not isinstance(s["key_dims"], bool)
                                    and 0 < s["key_dims"] <= len(tuple(s["block_shape"]))):
            raise TypeError(f"{what}[{i}] key_dims must be a positive integer no larger "
                            f"than the block's rank, got {s['key_dims']!r}")
        if "element_padding" in s:
            pads = tuple(s["element_padding"])
            bs = tuple(s["block_shape"])
            if (len(pads) != 2 * len(bs) or not all(isinstance(x, int) for x in pads)
                    or any((lo < 0) != (hi < 0) or (lo < 0 and (lo, hi) != (-1, -1))
                           or (lo >= 0 and b == SQUEEZED)
                           for lo, hi, b in zip(pads[::2], pads[1::2], bs))):
                raise TypeError(f"{what}[{i}] element_padding {pads} must hold a (low, "
                                f"high) pair of padding sizes >= 0 per element dim of "
                                f"block_shape {bs}, and -1, -1 per other dim")
    return specs


def scratch_memory_spaces(params) -> tuple[str, ...]:
    """The memory space of each scratch buffer ("vmem" where the op names none)."""
    n = len(params.get("scratch_shapes") or ())
    spaces = tuple(params.get("scratch_memory_spaces") or ())
    return spaces if spaces else ("vmem",) * n


class PallasCallOp(JaxprOp, name="pallas_call"):
    """Runs kernel `callee` once per point of `grid` on blocks of the operands (inputs)
    and results (outputs). JAX: pallas_call_p."""

    num_operands = None
    pure = False   # the kernel may write its input refs; never CSE two calls
    attributes = {
        "callee": A.Sym(),
        "name": A.Str(default=None),
        "grid": A.Ints(default=()),
        "num_scalar_prefetch": A.Int(default=0),
        "in_specs": A.AnyAttr(),
        "out_specs": A.AnyAttr(),
        "scratch_shapes": A.AnyAttr(default=()),
        "scratch_memory_spaces": A.AnyAttr(default=None),
        "input_output_aliases": A.Ints(default=()),
        "interpret": A.Bool(default=False),
        # Interpret mode: DMA semaphores count bytes (pltpu.InterpretParams, JAX's TPU
        # interpreter) rather than elements (interpret=True, JAX's generic interpreter)
        "dma_bytes": A.Bool(default=False),
        # What unwritten outputs, padding and scratch hold in interpret mode: "" for
        # interpret=True's fill, "nan"/"zero" for pltpu.InterpretParams'
        # uninitialized_memory (see jaxpr_pallas_interpret.uninitialized)
        "uninitialized_memory": A.Str(default="", choices=("", "nan", "zero")),
        # JAX's TPU interpreter's random_seed (the order it visits parallel dimensions
        # in) and num_cores_or_threads (passes/pallas_interpret_order.py)
        "interpret_seed": A.Int(default=0),
        # its out_of_bounds_reads (passes/pallas_bounds.py; "" when not interpreted so)
        "out_of_bounds_reads": A.Str(default="", choices=("", "raise", "uninitialized")),
        # and its skip_floating_point_ops (passes/pallas_skip_float.py)
        "skip_floating_point_ops": A.Bool(default=False),
        # and its grid_point_recorder: the host callback's id (-1: none)
        "grid_point_recorder": A.Int(default=-1),
        "interpret_cores": A.Int(default=1),
        # An aliased operand and result are one buffer in interpret mode, as on the chip:
        # what the kernel writes through the operand's ref is the result (core_map's
        # kernels write the refs they close over through their inputs). Otherwise
        # interpret mode keeps them apart, as JAX's interpret=True does.
        "shared_aliases": A.Bool(default=False),
        # A kernel over a mesh of cores (pl.kernel, pl.core_map): its blocks' windows are
        # whole refs at the origin (JAX lowers such kernels with its mesh lowering).
        "mesh_kernel": A.Bool(default=False),
        "compiler_params": A.AnyAttr(default=None),
        "cost_estimate": A.AnyAttr(default=None),
        "metadata": A.AnyAttr(default=None),
        # The mesh of the shard_map the call was traced in (names, sizes): a TPU kernel
        # names other devices by their place in it (remote DMAs, axis_index).
        "mesh_axes": A.AnyAttr(default=None),
        "mesh_shape": A.Ints(default=()),
    }

    @classmethod
    def infer(cls, *avals, **params):
        raise InferError("'jaxpr.pallas_call' op declares its result types; build it with "
                         "emit_pallas_call")

    @classmethod
    def infer_at(cls, op: ir.Operation, avals, params):
        outs = [aval_of(r.type) for r in op.results]
        check_pallas_call(avals, outs, params, module_signatures(op))
        return tuple(outs)


def check_pallas_call(in_avals, out_avals, params, signature) -> None:
    """Checks operands/results against the specs, the kernel and the index maps
    (TypeError saying what does not fit)."""
    grid = tuple(params["grid"])
    if any(g < 0 and g != DYNAMIC for g in grid):
        raise TypeError(f"grid {grid} has a negative dimension (-1 marks a dynamic one)")
    n_dyn = sum(1 for g in grid if g == DYNAMIC)
    if len(in_avals) < n_dyn:
        raise TypeError(f"grid {grid} has {n_dyn} dynamic dimension(s) but the op has only "
                        f"{len(in_avals)} operands")
    for i, a in enumerate(in_avals[:n_dyn]):
        if isinstance(a, RefAval) or a.shape != () or a.dtype != "int32":
            raise TypeError(f"dynamic grid bound {i} is {a.str_short()}; the first "
                            f"{n_dyn} operand(s) must be i32 scalars (one per -1 in grid "
                            f"{grid})")
    in_avals = list(in_avals[n_dyn:])
    n_pre = params.get("num_scalar_prefetch") or 0
    if not 0 <= n_pre <= len(in_avals):
        raise TypeError(f"num_scalar_prefetch = {n_pre} must be between 0 and the number "
                        f"of operands ({len(in_avals)})")
    prefetch, in_avals = list(in_avals[:n_pre]), list(in_avals[n_pre:])
    prefetch_refs = []
    for i, a in enumerate(prefetch):
        if isinstance(a, RefAval) or getattr(a.dtype, "kind", "?") not in "iubfV":
            raise TypeError(f"scalar-prefetch operand {i} is {a.str_short()}; scalar "
                            f"prefetch takes integer, float or bool arrays")
        prefetch_refs.append(RefAval(a.shape, a.dtype))
    in_specs = _spec_list("in_specs", params["in_specs"])
    out_specs = _spec_list("out_specs", params["out_specs"])
    scratch = list(params["scratch_shapes"] or ())
    if len(in_specs) != len(in_avals):
        after = f" after {n_pre} scalar-prefetch operand(s)" if n_pre else ""
        raise TypeError(f"has {len(in_avals)} operands{after} but {len(in_specs)} "
                        f"in_specs")
    if len(out_specs) != len(out_avals):
        raise TypeError(f"has {len(out_avals)} results but {len(out_specs)} out_specs")
    for i, s in enumerate(scratch):
        if not isinstance(s, RefAval):
            raise TypeError(f"scratch_shapes[{i}] must be a memref type, got {s!r}")
    spaces = params.get("scratch_memory_spaces")
    if spaces:
        spaces = tuple(spaces)
        if len(spaces) != len(scratch):
            raise TypeError(f"scratch_memory_spaces {spaces} must name one memory space "
                            f"per scratch buffer ({len(scratch)})")
        for i, (sp, s) in enumerate(zip(spaces, scratch)):
            if sp not in MEMORY_SPACES + SEMAPHORE_SPACES:
                raise TypeError(f"scratch_memory_spaces[{i}] = {sp!r} must be one of "
                                f"{', '.join(MEMORY_SPACES + SEMAPHORE_SPACES)}")
            if sp in SEMAPHORE_SPACES and s.dtype != "int32":
                raise TypeError(f"scratch buffer {i} is a {sp} but has type "
                                f"{s.str_short()}; semaphores are i32 counters")
    refs = []
    index_map_ins = [ShapedArray((), "int32")] * len(grid) + prefetch_refs
    for what, specs, avals in (("input", in_specs, in_avals), ("output", out_specs, out_avals)):
        for i, (spec, aval) in enumerate(zip(specs, avals)):
            if isinstance(aval, RefAval):
                raise TypeError(f"{what} {i} is a ref ({aval.str_short()}); pallas_call "
                                f"takes and gives arrays")
            bs = tuple(spec["block_shape"])
            if len(bs) != aval.ndim:
                raise TypeError(f"{what} {i} block_shape {bs} must have one entry per "
                                f"dimension of {aval.str_short()}")
            if any(b < 1 and b != SQUEEZED for b in bs):
                raise TypeError(f"{what} {i} block_shape {bs} must hold positive sizes "
                                f"(or -1 for a squeezed dimension)")
            if spec.get("memory_space") in ("any", "hbm") and bs != aval.shape:
                raise TypeError(f"{what} {i} is in memory space {spec['memory_space']!r}, "
                                f"so its block is the whole array {aval.str_short()}, but "
                                f"block_shape is {bs}")
            refs.append(RefAval(block_ref_shape(bs), aval.dtype))
            ins, outs = signature(spec["index_map"])
            if list(ins) != index_map_ins:
                pre = f" and {n_pre} scalar-prefetch operand(s)" if n_pre else ""
                raise TypeError(f"{what} {i} index map @{spec['index_map']} takes "
                                f"{_fmt(ins)}, but a grid of rank {len(grid)}{pre} "
                                f"give{'' if n_pre else 's'} {_fmt(index_map_ins)}")
            if list(outs) != [ShapedArray((), "int32")] * aval.ndim:
                raise TypeError(f"{what} {i} index map @{spec['index_map']} returns "
                                f"{_fmt(outs)}, expected {aval.ndim} i32 block indices "
                                f"(one per dimension of {aval.str_short()})")
    cp = params.get("compiler_params")
    if cp is not None and not isinstance(cp, dict):
        raise TypeError(f"compiler_params must be a dictionary, got {cp!r}")
    sem = (cp or {}).get("dimension_semantics")
    if sem is not None:
        sem = tuple(sem)
        if len(sem) != len(grid) or not all(x in DIMENSION_SEMANTICS for x in sem):
            raise TypeError(f"compiler_params dimension_semantics {sem} must give one of "
                            f"{', '.join(DIMENSION_SEMANTICS)} per grid dimension (grid "
                            f"{grid})")
    ce = params.get("cost_estimate")
    if ce is not None and (not isinstance(ce, dict) or set(ce) != set(COST_FIELDS) or not
                           all(isinstance(ce[k], int) for k in COST_FIELDS)):
        raise TypeError(f"cost_estimate must be a dictionary of integers "
                        f"{{{', '.join(COST_FIELDS)}}}, got {ce!r}")
    md = params.get("metadata")
    if md is not None and not (isinstance(md, dict) and all(
            isinstance(v, (str, bool, int, float)) for v in md.values())):
        raise TypeError(f"metadata must be a dictionary of strings, got {md!r}")
    kin, kout = signature(params["callee"])
    want = prefetch_refs + refs + scratch
    if list(kin) != want or kout:
        raise TypeError(f"kernel @{params['callee']} has type {_fmt(kin)} -> {_fmt(kout)}, "
                        f"but the specs give {_fmt(want)} -> ()")
    aliases = tuple(params["input_output_aliases"] or ())
    if len(aliases) % 2:
        raise TypeError(f"input_output_aliases {aliases} must hold (input, output) pairs")
    for i, o in zip(aliases[::2], aliases[1::2]):
        if not (n_pre <= i < n_pre + len(in_avals) and 0 <= o < len(out_avals)):
            raise TypeError(f"input_output_aliases pair ({i}, {o}) is out of range for "
                            f"{n_pre + len(in_avals)} operands ({n_pre} scalar-prefetch) "
                            f"and {len(out_avals)} outputs")
        if in_avals[i - n_pre].strip_weak_type() != out_avals[o]:
            raise TypeError(f"input_output_aliases pair ({i}, {o}) aliases "
                            f"{in_avals[i - n_pre].str_short()} with {out_avals[o].str_short()}; "
                            f"their types must be equal")


def _fmt(avals) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def emit_pallas_call(b, operands, out_avals, **params) -> list[ir.Value]:
    """Builds a checked jaxpr.pallas_call with a Builder `b` (the kernel and index maps
    must exist in the module)."""
    params = PallasCallOp.check_params(params)
    avals = [aval_of(v.type) for v in operands]
    try:
        check_pallas_call(avals, list(out_avals), params, module_signatures(b.ip.block.owner))
    except TypeError as e:
        raise InferError(f"'jaxpr.pallas_call' op {e}") from None
    return list(PallasCallOp.create(operands, out_avals, params, loc=b.loc, ip=b.ip).results)


__all__ = ["COST_FIELDS", "DIMENSION_SEMANTICS", "DYNAMIC", "MEMORY_SPACES", "PallasCallOp",
           "SEMAPHORE_SPACES", "SQUEEZED", "block_ref_shape", "block_sizes",
           "check_pallas_call", "element_padding", "emit_pallas_call",
           "scratch_memory_spaces"]
