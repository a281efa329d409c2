"""A Mosaic module serialized into `stablehlo.custom_call @tpu_custom_call`, as JAX's
tpu_custom_call.py builds it for libtpu.

    body = serialize(kmod, target_version)             # mosaic-serde, bytecode, base64
    new = tpu_custom_call(call, body, name, config)   # replaces the pallas_call

`config_json` writes any of JAX's CustomCallBackendConfig fields and `emit_custom_call`
makes the op: pallas_call's kernels (`backend_config`, `tpu_custom_call`) and the
hand-written kernels of `jaxpr.tpu_custom_call` (tpu_kernel.py) share both.

The backend_config is JSON in JAX's field order: `custom_call_config` (`body`, optional
`has_communication`, `collective_id`, `cost_estimate`, `serialization_format: 1`,
`needs_layout_passes: true`, `allow_input_fusion`, `disable_bounds_checks`), then
`scoped_memory_configs` for a VMEM limit and `flag_configs` for Mosaic flags. The op
carries row-major layouts, `output_operand_aliases`, `kernel_name` and the
`kernel_metadata` frontend attribute.
"""
from __future__ import annotations

import base64
import io
import json

import numpy as np
from jaxlib.mlir import ir, passmanager
from jaxlib.mlir.dialects import stablehlo as hlo
from jaxlib.mosaic.python import tpu

from mjax.passes.kernel_lowering.custom_call import output_operand_aliases, row_major_layouts
from mjax.passes.kernel_lowering.types import op_params

TPU_CALL_TARGET = "tpu_custom_call"


def serialize(kmod: ir.Module, target_version: int) -> tuple[bytes, bool]:
    """The kernel module as libtpu reads it: `mosaic-serde` (at `target_version`; 0:
    the newest), then MLIR bytecode. Returns (bytecode, has_communication)."""
    has_communication, _ = tpu.private_has_communication(kmod.operation)
    clone = ir.Module.parse(kmod.operation.get_asm(binary=True))
    version = f" target-version={target_version}" if target_version else ""
    passmanager.PassManager.parse(
        f"builtin.module(mosaic-serde{{serialize=true{version}}})").run(clone.operation)
    buf = io.BytesIO()
    clone.operation.write_bytecode(buf, desired_version=0)
    return buf.getvalue(), bool(has_communication)


def _compact_json(obj: dict) -> str:
    """JSON as JAX's _compact_json_object writes it (sorted keys, one per line)."""
    return json.dumps(obj, sort_keys=True, indent=0, separators=(",", ":"))


def kernel_metadata(params: dict, mesh_axes=()) -> str:
    """The kernel_metadata frontend attribute: pallas_call's `metadata` dictionary (an
    op attribute of that name, when the frontend records one) as compact JSON, with
    `mesh_axes` (the mesh axes the kernel names, as a JSON list) when there are any."""
    metadata = dict(params.get("metadata") or {})     # (values as given, as JAX's)
    if mesh_axes:
        if "mesh_axes" in metadata:
            raise ValueError("Metadata already contains mesh axes.")
        metadata["mesh_axes"] = json.dumps(list(mesh_axes))
    return _compact_json(metadata)


def _bool(b) -> str:
    return "true" if b else "false"


# JAX's tpu_custom_call.MemorySpace colors, by the names jaxpr.tpu_custom_call spells
MEMORY_SPACE_COLORS = {"hbm": 0, "vmem": 1, "semaphore_mem": 2, "smem": 4, "host": 5,
                       "sc_scalar_semaphore_mem": 8}


def _flag_value(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return f'"boolean_value": {_bool(v)}'
    if isinstance(v, (int, np.integer)):
        return f'"integer_value": {int(v)}'
    if isinstance(v, (float, np.floating)):
        return f'"double_value": {float(v)}'
    raise ValueError(f"invalid flag value: {v}")


def config_json(body: bytes, *, has_communication: bool = False, collective_id=None,
                cost_estimate: dict | None = None, needs_hlo_passes: bool = False,
                serialization_format: int | None = 1, needs_layout_passes: bool = True,
                shape_invariant_numerics: bool = True, allow_input_fusion=None,
                internal_scratch_in_bytes=None, output_memory_spaces=None,
                input_memory_spaces=None, disable_bounds_checks: bool = False,
                disable_semaphore_checks: bool = False, skip_device_barrier: bool = False,
                tiling: str | None = None, device_type: str | None = None,
                vmem_limit_bytes=None, flags=None, active_core_count=None) -> str:
    """The custom call's backend_config JSON, field by field in JAX's order (JAX:
    CustomCallBackendConfig.to_json). `cost_estimate` is written as given (sorted keys);
    `flags` is a dictionary or (name, value) pairs, kept in order; memory spaces are
    MEMORY_SPACE_COLORS names ("" or None: none)."""
    parts = ['{"custom_call_config": {"body": "', base64.b64encode(body).decode("ascii"), '"']
    if has_communication:
        parts.append(', "has_communication": true')
    if collective_id is not None:
        parts.append(f', "collective_id": {int(collective_id)}')
    if cost_estimate is not None:
        parts.append(', "cost_estimate": ' + _compact_json(dict(cost_estimate)))
    if needs_hlo_passes:
        parts.append(', "needs_hlo_passes": true')
    if serialization_format is not None:
        parts.append(f', "serialization_format": {int(serialization_format)}')
    if needs_layout_passes:
        parts.append(', "needs_layout_passes": true')
    if not shape_invariant_numerics:
        parts.append(', "shape_invariant_numerics": false')
    if allow_input_fusion is not None:
        parts.append(', "allow_input_fusion": [' + ",".join(_bool(x) for x in allow_input_fusion)
                     + "]")
    if internal_scratch_in_bytes is not None:
        parts.append(f', "internal_scratch_in_bytes": {int(internal_scratch_in_bytes)}')
    if output_memory_spaces is not None:
        several = len(output_memory_spaces) > 1
        colors = [(f'{{"color":{MEMORY_SPACE_COLORS[s]},"shape_index":[{i}]}}' if several
                   else f'{{"color":{MEMORY_SPACE_COLORS[s]}}}')
                  for i, s in enumerate(output_memory_spaces) if s]
        if colors:
            parts.append(', "output_memory_space_colors": [' + ",".join(colors) + "]")
    if input_memory_spaces is not None:
        colors = []
        for i, s in enumerate(input_memory_spaces):
            if not s or s == "smem":             # (XLA pages no SMEM arrays out: as JAX)
                continue
            if s not in ("hbm", "vmem"):
                raise NotImplementedError("input_memory_space_colors only supports HBM, "
                                          "VMEM and SMEM")
            colors.append(f'{{"operand_index":{i},"color":{MEMORY_SPACE_COLORS[s]}}}')
        if colors:
            parts.append(', "input_memory_space_colors": [' + ",".join(colors) + "]")
    if disable_bounds_checks:
        parts.append(', "disable_bounds_checks": true')
    if disable_semaphore_checks:
        parts.append(', "disable_semaphore_checks": true')
    if skip_device_barrier:
        parts.append(', "skip_device_barrier": true')
    parts.append("}")
    if tiling is not None:
        parts.append(', "sparse_core_config": ' + _compact_json({"tiling": tiling}))
    if device_type is not None:
        parts.append(f', "device_type": "DEVICE_TYPE_{device_type.upper()}"')
    if vmem_limit_bytes is not None:
        parts.append(', "scoped_memory_configs": [{"memory_space":1, "offset": 0, "size": '
                     f'{int(vmem_limit_bytes)}}}]')
    if flags is not None:
        items = flags.items() if isinstance(flags, dict) else flags
        parts.append(', "flag_configs": [' + ",".join(
            f'{{"flag_type": "{k}", "value": {{{_flag_value(v)}}}}}' for k, v in items) + "]")
    if device_type == "sparsecore" and active_core_count == 1:
        parts.append(', "megachip_parallelism_config": {"cores": ["0"]}')
    parts.append("}")
    return "".join(parts)


def backend_config(body: bytes, params: dict, has_communication: bool) -> str:
    """The backend_config of a pallas_call's kernel (`params`: the op's; JAX's Pallas
    adds a zero remote_bytes_transferred to pl.CostEstimate's three counts)."""
    cp = params.get("compiler_params") or {}
    cp = cp if isinstance(cp, dict) else {}
    cost = params.get("cost_estimate")
    if cost:
        cost = {"remote_bytes_transferred": 0, **{k: int(v) for k, v in dict(cost).items()}}
    return config_json(
        body, has_communication=has_communication,
        collective_id=cp.get("collective_id"), cost_estimate=cost or None,
        allow_input_fusion=cp.get("allow_input_fusion"),
        internal_scratch_in_bytes=cp.get("internal_scratch_in_bytes"),
        disable_bounds_checks=bool(cp.get("disable_bounds_checks")),
        vmem_limit_bytes=cp.get("vmem_limit_bytes"), flags=cp.get("flags") or None)


def tpu_custom_call(call: ir.Operation, config: str, name: str,
                    metadata: str = "{}") -> tuple[ir.Operation, list[ir.Value]]:
    """The stablehlo.custom_call @tpu_custom_call that replaces the pallas_call `call`,
    and the values that replace its results."""
    params = op_params(call)
    # Booleans cross into kernels as i32 (as JAX: Mosaic has no boolean memrefs).
    with call.location, ir.InsertionPoint(call):
        operands = [_bool_as_i32(v) for v in call.operands]
    results = [_i32_if_bool(r.type) for r in call.results]
    cp = params.get("compiler_params") or {}
    effects = side_effects(cp.get("has_side_effects") if isinstance(cp, dict) else None)
    # (pairs index the operands after the dynamic grid bounds, as in JAX)
    n_dynamic = sum(1 for g in params.get("grid", ()) or () if int(g) < 0)
    new = emit_custom_call(call, operands, results, config, kernel_name=name,
                           effects=effects,
                           aliases=list(params.get("input_output_aliases", ()) or ()),
                           first_operand=n_dynamic, metadata=metadata)
    with call.location, ir.InsertionPoint(call):
        outs = [_i32_as_bool(v, r.type) for v, r in zip(new.results, call.results)]
    return new, outs


def emit_custom_call(at: ir.Operation, operands, results, config: str, *,
                     kernel_name: str | None, effects: str, aliases=(),
                     first_operand: int = 0, metadata: str | None = None) -> ir.Operation:
    """A `stablehlo.custom_call @tpu_custom_call` before `at`, as JAX's
    _tpu_custom_call_lowering makes it: row-major layouts, `kernel_name` (when given),
    `output_operand_aliases` of the flat (input, output) pairs `aliases` (input i is
    operand first_operand + i), and the `kernel_metadata` frontend attribute (when
    given; with `xla_allow_dce_side_effecting_op` for a dataflow-side-effecting kernel)."""
    attrs = {
        "call_target_name": ir.StringAttr.get(TPU_CALL_TARGET),
        "has_side_effect": ir.BoolAttr.get(effects != "pure"),
        "backend_config": ir.StringAttr.get(config),
        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
        "called_computations": ir.ArrayAttr.get([]),
        "operand_layouts": row_major_layouts([v.type for v in operands]),
        "result_layouts": row_major_layouts(results),
    }
    if kernel_name is not None:
        attrs["kernel_name"] = ir.StringAttr.get(kernel_name)
    aliases = list(aliases)
    if aliases:
        attrs["output_operand_aliases"] = output_operand_aliases(aliases, len(results),
                                                                 first_operand)
    with at.location, ir.InsertionPoint(at):
        new = hlo.CustomCallOp.build_generic(results=results, operands=list(operands),
                                             attributes=attrs)
    frontend = {}
    if metadata is not None:
        frontend["kernel_metadata"] = ir.StringAttr.get(metadata)
    if effects == "dataflow_side_effecting":       # (XLA may still drop it when unused)
        frontend["xla_allow_dce_side_effecting_op"] = ir.StringAttr.get("true")
    if frontend:
        new.operation.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get(frontend)
    return new.operation


def _is_bool(t: ir.Type) -> bool:
    return (isinstance(t, ir.RankedTensorType) and isinstance(
        ir.RankedTensorType(t).element_type, ir.IntegerType)
        and ir.IntegerType(ir.RankedTensorType(t).element_type).width == 1)


def _i32_if_bool(t: ir.Type) -> ir.Type:
    if not _is_bool(t):
        return t
    return ir.RankedTensorType.get(ir.RankedTensorType(t).shape,
                                   ir.IntegerType.get_signless(32))


def _bool_as_i32(v: ir.Value) -> ir.Value:
    return hlo.convert(_i32_if_bool(v.type), v) if _is_bool(v.type) else v


def _i32_as_bool(v: ir.Value, t: ir.Type) -> ir.Value:
    """An i32 kernel result as the bool it stands for (!= 0, as JAX's astype)."""
    if not _is_bool(t):
        return v
    shape = ir.RankedTensorType(t).shape
    i32 = ir.RankedTensorType.get(shape, ir.IntegerType.get_signless(32))
    zero = hlo.constant(ir.DenseElementsAttr.get_splat(
        i32, ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 0)))
    return hlo.compare(v, zero, hlo.ComparisonDirectionAttr.get("NE"),
                       compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))


def side_effects(value) -> str:
    """CompilerParams.has_side_effects (a bool or a SideEffectType value) as
    "pure", "dataflow_side_effecting" or "side_effecting"."""
    if value is None or value is False:
        return "pure"
    if value is True:
        return "side_effecting"
    value = str(value).lower().rsplit(".", 1)[-1]
    if value not in ("pure", "dataflow_side_effecting", "side_effecting"):
        raise ValueError(f"has_side_effects {value!r} is not a bool or a SideEffectType")
    return value


__all__ = ["MEMORY_SPACE_COLORS", "TPU_CALL_TARGET", "backend_config", "config_json",
           "emit_custom_call", "kernel_metadata", "serialize", "side_effects",
           "tpu_custom_call"]
