"""One pallas_call's kernel as a Triton module, and the XLA custom call that runs it.

    tmod, launch, name = lower_pallas_call(module, call)      # the `tt` module
    new = triton_custom_call(call, tmod, launch, name, num_warps, num_stages)

The kernel lowering (`KernelLowering`, the `kl` every rule in `TRITON` gets) builds a
public `tt.func` with one `!tt.ptr` per input and output array, run once per grid point:
grid dims map to `tt.get_program_id` x/y/z (`launch_grid`), each BlockSpec index map is
lowered on the program ids to where the program's blocks start, and the kernel body is
lowered op by op through `TRITON` by the kernel interpreter both Pallas lowerings share
(passes/kernel_lowering/interpreter.py; rules of ops with regions lower their bodies
back through `kl.lower_block`). The module is verified, canonicalized and serialized as
bytecode into `stablehlo.custom_call @__gpu$xla.gpu.triton`, as JAX's Pallas does.
"""
from __future__ import annotations

import io
import re

import numpy as np
from jaxlib.mlir import ir, passmanager
from jaxlib.mlir.dialects import stablehlo as hlo
from jaxlib.triton import dialect as tt

from mjax.dialect.context import context
from mjax.dialect.types import aval_of
from mjax.passes.kernel_lowering.custom_call import output_operand_aliases, row_major_layouts
from mjax.passes.kernel_lowering.interpreter import KernelInterpreter, find_func
from mjax.passes.kernel_lowering.types import op_params
from mjax.passes.registry import PassError, op_error
from mjax.passes.rules.tables import TRITON
from mjax.passes.triton.builders import binary, convert, i32
from mjax.passes.triton.types import RefBlock, TritonLoweringError, ptr_elt_type

# The Triton dialect joins the one mjax context: kernels are built, verified and
# serialized there (upstream func/arith/scf/math are already loaded).
tt.register_dialect(context())

TRITON_CALL_TARGET = "__gpu$xla.gpu.triton"
_CUDA_YZ_LIMIT = 2 ** 16 - 1


def sanitize_name(name: str) -> str:
    """A kernel name PTX accepts (letters, digits, underscores)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return name if name and not name[0].isdigit() else "_" + name


def launch_grid(grid: tuple) -> tuple[list[int], bool]:
    """The (x, y, z) launch grid and whether the grid is folded into x."""
    grid = tuple(int(g) for g in grid)
    if len(grid) <= 3 and all(g <= _CUDA_YZ_LIMIT for g in grid[1:]):
        return list(grid) + [1] * (3 - len(grid)), False
    total = int(np.prod(grid, dtype=np.int64))
    if total >= 2 ** 31:
        raise TritonLoweringError(f"grid {grid} has {total} programs, more than a CUDA "
                                  f"launch allows")
    return [total, 1, 1], True


class KernelLowering(KernelInterpreter):
    """Lowers one pallas_call's kernel into a Triton function (the `kl` rules get)."""

    table, error = TRITON, TritonLoweringError
    flag, backend, kernel = "jaxpr-pallas-to-triton", "Triton", "a Pallas kernel"

    def __init__(self, module: ir.Module, grid: tuple, platform: str):
        super().__init__(module, grid)
        self.platform = platform

    # -- the kernel ------------------------------------------------------------------
    def make_program_ids(self, folded: bool) -> None:
        """Each grid index from the launch's program ids (see `launch_grid`)."""
        if not folded:
            self.grid_indices = [tt.get_program_id(axis) if g > 1 else i32(0)
                                 for axis, g in enumerate(self.grid)]
            return
        linear = tt.get_program_id(0)          # row-major: the last grid dim is fastest
        pids = []
        for g in reversed(self.grid[1:]):
            pids.append(binary("rem", linear, i32(g), np.uint32))
            linear = binary("div", linear, i32(g), np.uint32)
        self.grid_indices = [linear] + pids[::-1]   # what is left is the outermost index

    def block_starts(self, spec: dict, array_shape: tuple, where) -> list:
        """First element of this program's block along each array dim."""
        block_shape = tuple(spec["block_shape"])
        fn = find_func(self.module, str(spec["index_map"]))
        if fn is None:
            raise op_error(where, f"index map @{spec['index_map']} is not defined")
        if len(block_shape) != len(array_shape):
            raise op_error(where, f"block shape {block_shape} has rank {len(block_shape)} "
                                  f"for an array of shape {array_shape}")
        body = fn.regions[0].blocks[0]
        if len(body.arguments) != len(self.grid):
            raise op_error(where, f"index map @{spec['index_map']} takes "
                                  f"{len(body.arguments)} arguments for a grid of rank "
                                  f"{len(self.grid)}")
        indices = self.lower_block(body, list(self.grid_indices))
        if len(indices) != len(block_shape):
            raise op_error(where, f"index map @{spec['index_map']} returns {len(indices)} "
                                  f"block indices for a block of rank {len(block_shape)}")
        starts = []
        for v, b, res in zip(indices, block_shape, fn.type.results):
            v = convert(v, aval_of(res).dtype, np.int32)
            starts.append(v if b in (-1, 1) else binary("mul", v, i32(b), np.int32))
        return starts


def _ref_arg_check(kernel, k: int, block_shape: tuple, dtype, where) -> None:
    t = kernel.type.inputs[k]
    if not isinstance(t, ir.MemRefType):
        raise op_error(where, f"kernel argument {k} has type {t}, not a ref (memref)")
    want = [b for b in block_shape if b != -1]
    if list(ir.MemRefType(t).shape) != want:
        raise op_error(where, f"kernel ref argument {k} has type {t}, but its BlockSpec "
                              f"gives blocks of shape {tuple(want)}")


def lower_pallas_call(module: ir.Module, call: ir.Operation, platform: str = "cuda"):
    """Builds the Triton module of one pallas_call: (module, launch grid, name)."""
    params = op_params(call)
    callee = str(params["callee"])
    kernel = find_func(module, callee)
    if kernel is None:
        raise op_error(call, f"kernel @{callee} is not defined")
    grid = tuple(params.get("grid", ()))
    if params.get("num_scalar_prefetch") or any(g < 0 for g in grid):
        raise op_error(call, "jaxpr-pallas-to-triton: scalar prefetch "
                             "(pltpu.PrefetchScalarGridSpec) and dynamic grids are TPU "
                             "features the Triton lowering does not support (nor does "
                             "JAX's); use interpret=True")
    in_specs, out_specs = list(params.get("in_specs", ())), list(params.get("out_specs", ()))
    n_in, n_out = len(call.operands), len(call.results)
    if len(in_specs) != n_in or len(out_specs) != n_out:
        raise op_error(call, f"has {len(in_specs)} in_specs and {len(out_specs)} "
                             f"out_specs for {n_in} inputs and {n_out} outputs")
    if any("element_padding" in spec for spec in in_specs + out_specs):
        raise op_error(call, "jaxpr-pallas-to-triton: pl.Element block dimensions are not "
                             "supported by the Triton lowering (nor by JAX's); use "
                             "interpret=True")
    if len(kernel.type.inputs) != n_in + n_out:
        raise PassError(call, f"'{call.name}' op jaxpr-pallas-to-triton: scratch buffers "
                              f"are not supported by the Triton lowering (kernel @{callee} "
                              f"takes {len(kernel.type.inputs)} refs for {n_in} inputs "
                              f"and {n_out} outputs); use interpret=True")
    arrays = ([aval_of(v.type) for v in call.operands]
              + [aval_of(r.type) for r in call.results])
    name = sanitize_name(str(params.get("name") or callee))
    try:
        launch, folded = launch_grid(grid)
    except TritonLoweringError as e:
        raise op_error(call, f"jaxpr-pallas-to-triton: {e}") from None
    kl = KernelLowering(module, grid, platform)
    with call.location:
        tmod = ir.Module.create()
        tmod.operation.attributes["sym_name"] = ir.StringAttr.get(name)   # as JAX names it
        ptr_types = [tt.PointerType.get(ptr_elt_type(a.dtype), 1) for a in arrays]
        ftype = ir.FunctionType.get(ptr_types, [])
        fn = tt.FuncOp(name, ir.TypeAttr.get(ftype), sym_visibility="public",
                       ip=ir.InsertionPoint(tmod.body))
        # XLA's buffers are at least 16-byte aligned; Triton vectorizes loads on it.
        aligned = ir.DictAttr.get({"tt.divisibility": _i32_attr(16)})
        fn.arg_attrs = ir.ArrayAttr.get([aligned] * len(ptr_types))
        entry = fn.body.blocks.append(*ptr_types)
        with ir.InsertionPoint(entry):
            kl.make_program_ids(folded)
            refs = []
            for k, (spec, aval, ptr) in enumerate(zip(in_specs + out_specs, arrays,
                                                      entry.arguments)):
                _ref_arg_check(kernel, k, tuple(spec["block_shape"]), aval.dtype, call)
                refs.append(RefBlock(ptr, aval.shape, np.dtype(aval.dtype),
                                     tuple(spec["block_shape"]),
                                     kl.block_starts(spec, aval.shape, call)))
            kl.lower_block(kernel.regions[0].blocks[0], refs)
            tt.return_([])
    try:
        tmod.operation.verify()
        # Fold the index arithmetic the rules emit op by op (Triton would too; this
        # keeps the serialized kernel and the dumps small).
        passmanager.PassManager.parse("builtin.module(canonicalize,cse)").run(
            tmod.operation)
    except ir.MLIRError as e:
        raise op_error(call, f"jaxpr-pallas-to-triton: the Triton module for kernel "
                             f"@{callee} does not verify: {e}") from None
    return tmod, launch, name


def _i32_attr(v: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(v))


def triton_custom_call(call: ir.Operation, tmod: ir.Module, launch: list[int], name: str,
                       num_warps: int, num_stages: int) -> ir.Operation:
    """The stablehlo.custom_call that replaces `call`."""
    buf = io.BytesIO()
    tmod.operation.write_bytecode(buf)
    operands = list(call.operands)
    results = [r.type for r in call.results]
    attrs = {
        "call_target_name": ir.StringAttr.get(TRITON_CALL_TARGET),
        "has_side_effect": ir.BoolAttr.get(False),
        "backend_config": ir.StringAttr.get(""),
        "api_version": _i32_attr(1),      # the config is the mhlo.backend_config dict
        "called_computations": ir.ArrayAttr.get([]),
        "operand_layouts": row_major_layouts([v.type for v in operands]),
        "result_layouts": row_major_layouts(results),
    }
    aliases = list(op_params(call).get("input_output_aliases", ()) or ())
    if aliases:
        attrs["output_operand_aliases"] = output_operand_aliases(aliases, len(results))
    with call.location, ir.InsertionPoint(call):
        new = hlo.CustomCallOp.build_generic(results=results, operands=operands,
                                             attributes=attrs)
    grid_x, grid_y, grid_z = launch
    new.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get({
        "name": ir.StringAttr.get(name),
        "ir": ir.StringAttr.get(buf.getvalue()),
        "num_warps": _i32_attr(num_warps),
        "num_stages": _i32_attr(num_stages),
        "grid_x": _i32_attr(grid_x), "grid_y": _i32_attr(grid_y),
        "grid_z": _i32_attr(grid_z),
        "debug": ir.BoolAttr.get(False),
    })
    return new.operation


def compiler_params(params: dict, platform: str) -> tuple[int, int]:
    cp = params.get("compiler_params") or {}
    if not isinstance(cp, dict):
        cp = {}
    num_warps = cp.get("num_warps")
    num_stages = cp.get("num_stages")
    return (4 if num_warps is None else int(num_warps),
            (1 if platform == "rocm" else 3) if num_stages is None else int(num_stages))


__all__ = ["KernelLowering", "TRITON_CALL_TARGET", "compiler_params", "launch_grid",
           "lower_pallas_call", "sanitize_name", "triton_custom_call"]
