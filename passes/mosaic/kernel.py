"""One pallas_call's kernel as a Mosaic module: the kernel function and its transforms.

    kmod, info = lower_pallas_call(module, call, target_version)

The kernel `func.func @<name>` takes, as libtpu's Mosaic expects (JAX:
pallas/mosaic/lowering.py, lower_jaxpr_to_module):

    (grid indices: i32..., scalar prefetch: memref<..., smem>...,
     one block per input and output: memref<block, vmem|smem|any|hbm>...,
     scratch: memref<..., vmem|smem|semaphore_mem>...)

with attributes `dimension_semantics`, `iteration_bounds` (grids of rank > 0),
`scalar_prefetch`, `scratch_operands`, `tpu.core_type` and `window_params`: one entry per
block operand, `{transform_indices = @transform_<i>, window_bounds = <block shape>}` (and
`pipeline_mode` for a pl.Buffered spec), `{}` for whole-array ANY/HBM operands. Each
transform function is its BlockSpec's index map lowered over (grid indices, scalar
prefetch refs). The kernel body lowers op by op through `MOSAIC`, by the kernel
interpreter both Pallas lowerings share (passes/kernel_lowering/interpreter.py; the rules
of ops with regions lower their bodies back through `kl.lower_block`).
"""
from __future__ import annotations

import re

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func as func_d
from jaxlib.mosaic.python import tpu

from mjax.dialect.context import context
from mjax.dialect.dtype_rules import bitwidth
from mjax.dialect.ops.pallas import element_padding
from mjax.dialect.types import aval_of
from mjax.passes.interpreter import Env, interpret, terminator
from mjax.passes.kernel_lowering.interpreter import KernelInterpreter, KernelUnsupported, find_func
from mjax.passes.kernel_lowering.types import op_params
from mjax.passes.mosaic.loops import simplify_kernel_loops
from mjax.passes.mosaic.table import MOSAIC
from mjax.passes.mosaic.types import (BlockRef, Const, MosaicLoweringError, full, materialize,
                                      ref_type)
from mjax.passes.mosaic.scopes import Scopes, kernel_root, op_stack
from mjax.passes.registry import op_error

# The TPU dialect joins the one mjax context: kernels are built, serialized and printed
# there (func/arith/math/vector/scf/memref are already loaded).
tpu.register_dialect(context())

SEMANTICS = ("parallel", "arbitrary", "core_parallel", "subcore_parallel")
WHOLE_ARRAY_SPACES = ("any", "hbm", "semaphore", "dma_semaphore", "barrier_semaphore",
                      "semaphore_mem")


class KernelLowering(KernelInterpreter):
    """Lowers one pallas_call's kernel into Mosaic (the `kl` rules get). Blocks lower to
    Mosaic values, constants staying `Const`s: a rule materializes one with `value`
    where it needs an MLIR value."""

    table, error = MOSAIC, MosaicLoweringError
    flag, backend, kernel = "jaxpr-pallas-to-mosaic", "Mosaic", "a Pallas TPU kernel"

    def __init__(self, module: ir.Module, grid: tuple, target_version: int):
        super().__init__(module, grid)
        self.target_version = target_version
        self.compiler_params: dict = {}
        self.scope_base = Scopes()      # (lower_block: what op scopes are relative to)
        self.key_refs: list = []        # (the memrefs of key arrays' blocks: their data)

    @property
    def forward_compatible(self) -> bool:
        """Whether the module is for the oldest libtpu (export, another platform)."""
        return self.target_version != 0

    def value(self, x, dtype=None) -> ir.Value:
        return materialize(x, dtype)

    # -- named scopes ----------------------------------------------------------------
    # Each named_scope opened in the kernel brackets its ops with tpu.trace_start /
    # tpu.trace_stop (what TPU profiles show), as JAX's lowering does from each
    # equation's name stack. Scopes are relative to the function or body being lowered:
    # JAX traces each body afresh, so a scope opened around a loop or a call brackets the
    # op, not the ops of its body; mjax's ops carry the whole path, hence `scope_base`.
    def lower_block(self, block: ir.Block, args: list, skip=None) -> list:
        current = [()]
        rule_for = super().rule_for
        base = self.scope_base

        def traced(op):
            rule = rule_for(op)
            if op.name == "jaxpr.constant":        # (JAX's literals are no equations)
                return rule
            scopes = op_stack(op, base)
            inner = scopes[len(base):] if scopes[:len(base)] == base else ()

            def run(op, operands):
                if inner != current[0] and op.name in _LITERALS_FIRST:
                    # (JAX makes an equation's literal operands before it opens or
                    # closes a scope there, but for the rules that take them as they are)
                    operands = [materialize(x) if isinstance(x, Const) and x.value.ndim == 0
                                else x for x in operands]
                current[0] = _retrace(current[0], inner)
                self.scope_base = scopes     # (what the op's bodies are relative to)
                try:
                    return rule(op, operands)
                finally:
                    self.scope_base = base
            return run

        if skip is not None:
            def rule_for_skip(op):
                return _skipped if op == skip else traced(op)
            outs = interpret(block, rule_for_skip, Env(zip(block.arguments, args)))
        else:
            outs = interpret(block, traced, Env(zip(block.arguments, args)))
        _retrace(current[0], ())
        return outs


# (ops whose JAX rules get their literal operands as MLIR constants: lowering.py's
# _ensure_mlir_value, not skipped for them)
_LITERALS_FIRST = frozenset(f"jaxpr.{n}" for n in ("eq", "ne", "lt", "le", "gt", "ge",
                                                   "select_n", "while", "run_scoped"))


def _retrace(old: tuple, new: tuple) -> tuple:
    """Closes the scopes of `old` that `new` leaves and opens those it enters."""
    common = 0
    while common < min(len(old), len(new)) and old[common] == new[common]:
        common += 1
    for _ in old[common:]:
        tpu.trace_stop()
    for name in new[common:]:
        tpu.trace_start(message=name, level=10)
    return new


def _skipped(op: ir.Operation, operands: list) -> list:
    return [None] * len(op.results)


def dimension_semantics(params: dict, rank: int) -> list[str]:
    """Per grid dim: `compiler_params.dimension_semantics` (default "arbitrary")."""
    cp = params.get("compiler_params") or {}
    sems = cp.get("dimension_semantics") if isinstance(cp, dict) else None
    if sems is None:
        return ["arbitrary"] * rank
    sems = [str(s).lower().rsplit(".", 1)[-1] for s in sems]
    if len(sems) != rank:
        raise MosaicLoweringError(f"dimension_semantics {tuple(sems)} must have one entry "
                                  f"per grid dimension (grid of rank {rank})")
    for s in sems:
        if s not in SEMANTICS:
            raise MosaicLoweringError(f"dimension semantics {s!r} is not one of "
                                      f"{', '.join(SEMANTICS)}")
    return sems


def core_type(params: dict) -> str:
    """The core the kernel runs on: CompilerParams.kernel_type (default the TensorCore)."""
    cp = params.get("compiler_params") or {}
    kind = cp.get("kernel_type") if isinstance(cp, dict) else None
    kind = "tc" if kind is None else str(kind).lower().rsplit(".", 1)[-1]
    known = {"tc": "tc", "tensorcore": "tc", "sc_scalar_subcore": "sc_scalar_subcore",
             "sc_vector_subcore": "sc_vector_subcore"}
    if kind not in known:
        raise MosaicLoweringError(f"kernel_type {kind!r} is not one of {', '.join(known)}")
    return known[kind]


def _attr_list(texts) -> ir.Attribute:
    return ir.ArrayAttr.get([ir.Attribute.parse(t) for t in texts])


def _i64(v: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(v))


class CallLayout:
    """Who is who among a pallas_call's operands, specs and kernel refs."""

    def __init__(self, call: ir.Operation, params: dict):
        # (JAX's dynamic grid bounds come first: one i32 operand per -1 in the grid)
        self.n_dynamic = sum(1 for g in params.get("grid", ()) or () if int(g) < 0)
        self.n_prefetch = int(params.get("num_scalar_prefetch", 0) or 0)
        self.in_specs = list(params.get("in_specs", ()) or ())
        self.out_specs = list(params.get("out_specs", ()) or ())
        self.scratch = list(params.get("scratch_shapes", ()) or ())
        self.scratch_spaces = list(params.get("scratch_memory_spaces", ()) or ()) or [
            "vmem"] * len(self.scratch)
        operands = list(call.operands)[self.n_dynamic:]
        self.prefetch_avals = [aval_of(v.type) for v in operands[:self.n_prefetch]]
        self.block_avals = ([aval_of(v.type) for v in operands[self.n_prefetch:]]
                            + [aval_of(r.type) for r in call.results])
        self.specs = self.in_specs + self.out_specs
        if len(self.in_specs) != len(operands) - self.n_prefetch:
            raise op_error(call, f"has {len(self.in_specs)} in_specs for "
                                 f"{len(operands) - self.n_prefetch} block operands")
        if len(self.out_specs) != len(call.results):
            raise op_error(call, f"has {len(self.out_specs)} out_specs for "
                                 f"{len(call.results)} results")
        if len(self.scratch_spaces) != len(self.scratch):
            raise op_error(call, f"has {len(self.scratch_spaces)} scratch memory spaces "
                                 f"for {len(self.scratch)} scratch buffers")


def _spec_space(spec: dict) -> str:
    return str(spec.get("memory_space") or "vmem")


def lower_pallas_call(module: ir.Module, call: ir.Operation, target_version: int):
    """Builds the Mosaic module of one pallas_call: (module, kernel name)."""
    params = op_params(call)
    callee = str(params["callee"])
    kernel = find_func(module, callee)
    if kernel is None:
        raise op_error(call, f"kernel @{callee} is not defined")
    grid = tuple(int(g) for g in params.get("grid", ()) or ())
    lay = CallLayout(call, params)
    try:
        sems = dimension_semantics(params, len(grid))
        core_type(params)
        for spec, aval in zip(lay.specs, lay.block_avals):
            element_window(spec)
            trivial = _trivial_window(module, spec, aval)
            check_block(spec, aval, trivial)
            if not grid and not trivial:
                raise MosaicLoweringError(
                    f"a pallas_call without a grid takes whole arrays: block shape "
                    f"{tuple(spec['block_shape'])} of an array of shape {aval.shape} "
                    f"(or a nonzero index map) needs a grid")
    except MosaicLoweringError as e:
        raise KernelUnsupported(call, f"'{call.operation.name}' op jaxpr-pallas-to-mosaic: "
                                      f"{e}") from None
    # (a symbol name libtpu and XLA accept, as JAX sanitizes it)
    name = re.sub(r"[^\w.-]", "_", str(params.get("name") or callee))
    # (JAX DCEs the kernel's jaxpr before lowering it: pure ops nothing uses, such as the
    # hash words a PRNG kernel computes and drops, leave no Mosaic ops, nor do the loop
    # carries nothing reads; JAX has no DCE rule for run_scoped, so what its body computes
    # stays, as emit_pipeline's index arithmetic. Its loops forward unchanged carries.)
    simplify_kernel_loops(kernel, keep_inside=("jaxpr.run_scoped",))
    kl = KernelLowering(module, grid, target_version)
    kl.scope_base = kernel_root(call)   # (JAX traces the kernel outside the caller's scopes)
    cp = params.get("compiler_params")
    kl.compiler_params = cp if isinstance(cp, dict) else {}
    kl.mesh = (tuple(params.get("mesh_axes") or ()), tuple(params.get("mesh_shape") or ()))
    i32 = ir.IntegerType.get_signless(32)
    with call.location:
        kmod = ir.Module.create()
        with ir.InsertionPoint(kmod.body):
            prefetch_types = [ref_type(a.shape, a.dtype, "smem") for a in lay.prefetch_avals]
            block_types = []
            for spec, aval in zip(lay.specs, lay.block_avals):
                # (squeezed dims stay, of size 1: BlockRef hides them from the kernel)
                shape = [1 if b == -1 else b for b in tuple(spec["block_shape"])]
                block_types.append(ref_type(shape, aval.dtype, _spec_space(spec)))
            scratch_types = [ref_type(s.shape, s.dtype, str(sp))
                             for s, sp in zip(lay.scratch, lay.scratch_spaces)]
            arg_types = [i32] * len(grid) + prefetch_types + block_types + scratch_types
            fn = func_d.FuncOp(name, (arg_types, []))
            entry = fn.add_entry_block()
            args = list(entry.arguments)
            kl.grid_indices = args[:len(grid)]
            refs = args[len(grid):]
            first = len(prefetch_types)
            kl.key_refs = [refs[first + k] for k, spec in enumerate(lay.specs)
                           if int(spec.get("key_dims", 0) or 0)]
            for k, spec in enumerate(lay.specs):
                sq = tuple(d for d, b in enumerate(tuple(spec["block_shape"])) if b == -1)
                if sq:
                    refs[first + k] = BlockRef(refs[first + k], sq)
            with ir.InsertionPoint(entry):
                kl.lower_block(kernel.regions[0].blocks[0], refs)
                func_d.ReturnOp([])
            window_params = []
            for k, (spec, aval) in enumerate(zip(lay.specs, lay.block_avals)):
                if not grid:       # (one program: the blocks are the arrays)
                    break
                if _spec_space(spec) in WHOLE_ARRAY_SPACES:
                    window_params.append(ir.DictAttr.get({}))
                    continue
                if params.get("mesh_kernel"):   # (JAX's mesh lowering: the ref at 0)
                    window_params.append(ir.DictAttr.get({"transform_indices": (
                        ir.AffineMapAttr.get(ir.AffineMap.get(len(grid), 0, [
                            ir.AffineConstantExpr.get(0)] * len(aval.shape))))}))
                    continue
                tname = f"transform_{k}"
                _transform_func(kl, module, spec, tname, grid, prefetch_types, call)
                entry_attrs = {
                    "transform_indices": ir.FlatSymbolRefAttr.get(tname),
                    "window_bounds": ir.DenseI64ArrayAttr.get(
                        [1 if b == -1 else int(b) for b in tuple(spec["block_shape"])]),
                }
                window = element_window(spec)
                if window is not None:
                    entry_attrs["window_kind"] = window
                buffers = spec.get("buffer_count")
                if _spec_space(spec) == "vmem" and _trivial_window(module, spec, aval):
                    buffers = 1      # (JAX: one buffer when the block is the array)
                if buffers is not None:
                    if int(buffers) not in (1, 2):
                        raise op_error(call, f"jaxpr-pallas-to-mosaic: pl.Buffered("
                                             f"{buffers}): the TPU pipelines blocks with "
                                             f"1 or 2 buffers")
                    mode = "synchronous" if int(buffers) == 1 else "double_buffered"
                    entry_attrs["pipeline_mode"] = ir.Attribute.parse(
                        f"#tpu.pipeline_mode<{mode}>")
                window_params.append(ir.DictAttr.get(entry_attrs))
            attrs = fn.operation.attributes
            attrs["dimension_semantics"] = _attr_list(
                f"#tpu.dimension_semantics<{s}>" for s in sems)
            if grid:          # (a dynamic dim: MLIR's dynamic size, as JAX)
                attrs["iteration_bounds"] = ir.DenseI64ArrayAttr.get(
                    [ir.ShapedType.get_dynamic_size() if g < 0 else g for g in grid])
            attrs["scalar_prefetch"] = _i64(lay.n_prefetch)
            attrs["scratch_operands"] = _i64(len(lay.scratch))
            attrs["tpu.core_type"] = ir.Attribute.parse(f"#tpu.core_type<{core_type(params)}>")
            if grid:
                attrs["window_params"] = ir.ArrayAttr.get(window_params)
    try:
        kmod.operation.verify()
    except ir.MLIRError as e:
        raise op_error(call, f"jaxpr-pallas-to-mosaic: the Mosaic module for kernel "
                             f"@{callee} does not verify: {e}") from None
    return kmod, name


def check_block(spec: dict, aval, trivial: bool) -> None:
    """JAX's rules for block shapes on the TPU (JAX: lowering._check_block_mappings): the
    last two dims of a VMEM block divisible by 8 and 128 or whole; an ANY/HBM block the
    whole array at block (0, ...); a rank-1 block whole, a multiple of 1024, or a power
    of 2 of at least 128 * (32 // bits)."""
    space = _spec_space(spec)
    if space in ("semaphore", "dma_semaphore", "barrier_semaphore") or (
            space == "smem" and trivial):
        return
    bs = tuple(1 if b == -1 else int(b) for b in tuple(spec["block_shape"]))
    shape = tuple(aval.shape)
    where = f"block shape {tuple(spec['block_shape'])} of an array of shape {shape}"
    if not bs:
        raise MosaicLoweringError(f"TPU blocks must have rank >= 1 ({where})")
    if space in ("any", "hbm") and not trivial:
        raise MosaicLoweringError(f"a block in memory space {space} must be the whole "
                                  f"array with an index map of zeros ({where})")
    if len(bs) >= 2:
        if not ((bs[-1] == shape[-1] or bs[-1] % 128 == 0)
                and (bs[-2] == shape[-2] or bs[-2] % 8 == 0)):
            raise MosaicLoweringError(
                f"the last two dimensions of a TPU block must be divisible by 8 and 128 "
                f"respectively, or equal the array's ({where})")
        return
    bits = 32 if np.dtype(aval.dtype) == np.bool_ else bitwidth(aval.dtype)   # (int4: 4)
    min_tiling = 128 * (32 // bits)
    if not (bs[0] == shape[0] or bs[0] % 1024 == 0
            or (bs[0] >= min_tiling and bs[0] & (bs[0] - 1) == 0)):
        raise MosaicLoweringError(
            f"a rank-1 TPU block must be the whole array, a multiple of 1024, or a power "
            f"of 2 of at least {min_tiling} ({where})")


def element_window(spec: dict):
    """`#tpu.element_window<low, high>` of a spec with pl.Element dims (None if it has
    none); as JAX, its other dims must be squeezed."""
    if "element_padding" not in spec:
        return None
    pads = element_padding(spec)
    bs = tuple(spec["block_shape"])
    if any(p is None and b != -1 for p, b in zip(pads, bs)):
        raise MosaicLoweringError("a BlockSpec's dims must all be pl.Element or squeezed, "
                                  "or none of them pl.Element")
    lo = [0 if p is None else p[0] for p in pads]
    hi = [0 if p is None else p[1] for p in pads]
    return ir.Attribute.parse(f"#tpu.element_window<{lo},{hi}>")


def _trivial_window(module, spec: dict, aval) -> bool:
    """Whether the block is the whole array and its index map gives constant zeros
    (JAX: BlockMapping.has_trivial_window)."""
    if tuple(1 if b == -1 else b for b in tuple(spec["block_shape"])) != tuple(aval.shape):
        return False
    imap = find_func(module, str(spec["index_map"]))
    if imap is None:
        return False
    end = terminator(imap.regions[0].blocks[0])
    for v in end.operands:
        owner = v.owner
        if isinstance(owner, ir.Block) or owner.operation.name != "jaxpr.constant":
            return False
        if np.asarray(op_params(owner.operation)["value"]).reshape(-1).tolist() != [0]:
            return False
    return True


def _transform_func(kl, module, spec, tname, grid, prefetch_types, call) -> None:
    """`func.func @transform_<k>(grid indices, scalar prefetch) -> block indices`, the
    spec's index map lowered."""
    imap = find_func(module, str(spec["index_map"]))
    if imap is None:
        raise op_error(call, f"index map @{spec['index_map']} is not defined")
    i32 = ir.IntegerType.get_signless(32)
    n_out = len(tuple(spec["block_shape"]))
    fn = func_d.FuncOp(tname, ([i32] * len(grid) + prefetch_types, [i32] * n_out))
    entry = fn.add_entry_block()
    with ir.InsertionPoint(entry):
        outer = kl.grid_indices
        kl.grid_indices = list(entry.arguments)[:len(grid)]
        try:
            outs = kl.lower_block(imap.regions[0].blocks[0], list(entry.arguments))
        finally:
            kl.grid_indices = outer
        k = int(spec.get("key_dims", 0) or 0)     # (a key array's data: its words)
        res = [materialize(v, np.int32) for v in outs[:len(outs) - k]]
        # JAX's transform functions hold one more zero here: its lowering materializes
        # the block indices of an extended dtype's trailing dims (unused for others).
        zero = full(0, np.int32)
        func_d.ReturnOp(res + [zero] * k)


__all__ = ["KernelLowering", "dimension_semantics", "lower_pallas_call"]
