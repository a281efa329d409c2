"""A Mosaic module serialized into `stablehlo.custom_call @tpu_custom_call`, as JAX's
tpu_custom_call.py builds it for libtpu.

    body = serialize(kmod, target_version)             # mosaic-serde, bytecode, base64
    new = tpu_custom_call(call, body, name, config)   # replaces the pallas_call

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


def kernel_metadata(params: dict) -> str:
    """The kernel_metadata frontend attribute: pallas_call's `metadata` dictionary (an
    op attribute of that name, when the frontend records one) as compact JSON."""
    metadata = params.get("metadata") or {}
    return _compact_json({str(k): str(v) for k, v in dict(metadata).items()})


def _bool(b) -> str:
    return "true" if b else "false"


def backend_config(body: bytes, params: dict, has_communication: bool) -> str:
    """The custom call's backend_config JSON (JAX: CustomCallBackendConfig.to_json)."""
    cp = params.get("compiler_params") or {}
    cp = cp if isinstance(cp, dict) else {}
    parts = ['{"custom_call_config": {"body": "', base64.b64encode(body).decode("ascii"), '"']
    if has_communication:
        parts.append(', "has_communication": true')
    if cp.get("collective_id") is not None:
        parts.append(f', "collective_id": {int(cp["collective_id"])}')
    cost = params.get("cost_estimate")
    if cost:
        cost = {"remote_bytes_transferred": 0, **{k: int(v) for k, v in dict(cost).items()}}
        parts.append(', "cost_estimate": ' + _compact_json(cost))
    parts.append(', "serialization_format": 1')
    parts.append(', "needs_layout_passes": true')
    fusion = cp.get("allow_input_fusion")
    if fusion is not None:
        parts.append(', "allow_input_fusion": [' + ",".join(_bool(x) for x in fusion) + "]")
    if cp.get("internal_scratch_in_bytes") is not None:
        parts.append(f', "internal_scratch_in_bytes": {int(cp["internal_scratch_in_bytes"])}')
    if cp.get("disable_bounds_checks"):
        parts.append(', "disable_bounds_checks": true')
    parts.append("}")
    if cp.get("vmem_limit_bytes") is not None:
        parts.append(', "scoped_memory_configs": [{"memory_space":1, "offset": 0, "size": '
                     f'{int(cp["vmem_limit_bytes"])}}}]')
    flags = cp.get("flags")
    if flags:
        items = []
        for k, v in dict(flags).items():
            if isinstance(v, (bool, np.bool_)):
                val = f'"boolean_value": {_bool(v)}'
            elif isinstance(v, (int, np.integer)):
                val = f'"integer_value": {int(v)}'
            else:
                val = f'"double_value": {float(v)}'
            items.append(f'{{"flag_type": "{k}", "value": {{{val}}}}}')
        parts.append(', "flag_configs": [' + ",".join(items) + "]")
    parts.append("}")
    return "".join(parts)


def tpu_custom_call(call: ir.Operation, config: str, name: str,
                    metadata: str = "{}") -> tuple[ir.Operation, list[ir.Value]]:
    """The stablehlo.custom_call @tpu_custom_call that replaces `call`, and the values
    that replace its results."""
    params = op_params(call)
    # Booleans cross into kernels as i32 (as JAX: Mosaic has no boolean memrefs).
    with call.location, ir.InsertionPoint(call):
        operands = [_bool_as_i32(v) for v in call.operands]
    results = [_i32_if_bool(r.type) for r in call.results]
    cp = params.get("compiler_params") or {}
    effects = side_effects(cp.get("has_side_effects") if isinstance(cp, dict) else None)
    attrs = {
        "call_target_name": ir.StringAttr.get(TPU_CALL_TARGET),
        "has_side_effect": ir.BoolAttr.get(effects != "pure"),
        "backend_config": ir.StringAttr.get(config),
        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
        "called_computations": ir.ArrayAttr.get([]),
        "operand_layouts": row_major_layouts([v.type for v in operands]),
        "result_layouts": row_major_layouts(results),
        "kernel_name": ir.StringAttr.get(name),
    }
    aliases = list(params.get("input_output_aliases", ()) or ())
    # (pairs index the operands after the dynamic grid bounds, as in JAX)
    n_dynamic = sum(1 for g in params.get("grid", ()) or () if int(g) < 0)
    if aliases:
        attrs["output_operand_aliases"] = output_operand_aliases(aliases, len(results),
                                                                 n_dynamic)
    with call.location, ir.InsertionPoint(call):
        new = hlo.CustomCallOp.build_generic(results=results, operands=operands,
                                             attributes=attrs)
        outs = [_i32_as_bool(v, r.type) for v, r in zip(new.results, call.results)]
    frontend = {"kernel_metadata": ir.StringAttr.get(metadata)}
    if effects == "dataflow_side_effecting":       # (XLA may still drop it when unused)
        frontend["xla_allow_dce_side_effecting_op"] = ir.StringAttr.get("true")
    new.operation.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get(frontend)
    return new.operation, outs


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


__all__ = ["TPU_CALL_TARGET", "backend_config", "kernel_metadata", "serialize",
           "tpu_custom_call"]
