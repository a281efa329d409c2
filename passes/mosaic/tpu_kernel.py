"""Hand-written Mosaic kernels: `jaxpr.tpu_custom_call` (mjax.experimental.mosaic's
as_tpu_kernel) as the `stablehlo.custom_call @tpu_custom_call` JAX's tpu_custom_call
lowering makes, with the serialization and backend_config of pallas_call's kernels
(custom_call.py):

    %y = "jaxpr.tpu_custom_call"(%x) {module = "module { ... }", kernel_name = "k", ...}
  ==>
    %y = stablehlo.custom_call @tpu_custom_call(%x) {backend_config = "{\\"custom_call_config
           \\": {\\"body\\": \\"TUzvUgFN...\\", \\"serialization_format\\": 1, ...}}",
           kernel_name = "k", ...}

`--jaxpr-pallas-to-mosaic` runs `lower_tpu_custom_calls` at its `target-version` (the
op's `ir_version` where the pass asks for the newest, as JAX writes the version the
kernel was serialized at unless the lowering asks for an older one). `kernel_facts`
reads what the config needs of the module (communication, SparseCore device type,
core-parallel size) and raises JAX's errors; as_tpu_kernel calls it first, as JAX does
when the kernel is made. JAX: tpu_custom_call._lower_to_custom_call_config,
_get_device_type, _get_active_core_count, _tpu_custom_call_lowering.
"""
from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mosaic.python import tpu

from mjax.dialect.context import context
from mjax.dialect.ops.mosaic import TpuCustomCallOp
from mjax.passes.ir_util import nested_ops
from mjax.passes.kernel_lowering.types import op_params
from mjax.passes.mosaic.custom_call import config_json, emit_custom_call, serialize

tpu.register_dialect(context())

_SPARSECORE = ("#tpu.core_type<sc_scalar_subcore>", "#tpu.core_type<sc_vector_subcore>")
_TENSORCORE = "#tpu.core_type<tc>"


def kernel_module(source) -> ir.Module:
    """The Mosaic module `source` (an ir.Module of any context, or its text) in mjax's
    context, verified."""
    ctx = context()
    if isinstance(source, ir.Module):
        source = source.operation.get_asm(binary=True, enable_debug_info=True)
    module = ir.Module.parse(source, ctx)
    module.operation.verify()
    return module


def _device_type(module: ir.Module) -> str | None:
    """"sparsecore" when a function runs on a SparseCore (its tpu.core_type); None for
    TensorCore kernels. ValueError for an unknown core type or both kinds."""
    kinds = set()
    for op in [module.operation] + nested_ops(module):
        if op.name != "func.func" or "tpu.core_type" not in op.attributes:
            continue
        core = str(op.attributes["tpu.core_type"])
        if core in _SPARSECORE:
            kinds.add("sc")
        elif core == _TENSORCORE:
            kinds.add("tc")
        else:
            raise ValueError(f"Unknown core type: {op.attributes['tpu.core_type']}")
    if kinds == {"sc", "tc"}:
        raise ValueError("A single Mosaic kernel cannot contain both TensorCore and "
                         "SparseCore functions.")
    return "sparsecore" if "sc" in kinds else None


def _active_core_count(module: ir.Module) -> int | None:
    """The static size of the core-parallel grid dimension of the module's kernels (the
    same in each), None without one."""
    size = None
    for op in module.body.operations:
        op = op.operation
        if op.name != "func.func" or "iteration_bounds" not in op.attributes or \
                "dimension_semantics" not in op.attributes:
            continue
        bounds = list(ir.DenseI64ArrayAttr(op.attributes["iteration_bounds"]))
        semantics = [str(s) for s in ir.ArrayAttr(op.attributes["dimension_semantics"])]
        if len(bounds) != len(semantics):
            raise ValueError("The iteration bounds and dimension semantics attributes must "
                             "have the same number of elements.")
        mine = None
        for dim, (bound, sem) in enumerate(zip(bounds, semantics)):
            if sem != "#tpu.dimension_semantics<core_parallel>":
                continue
            if ir.ShapedType.is_dynamic_size(bound):
                raise ValueError(f"The iteration bound corresponding to the core-parallel "
                                 f"dimension {dim} must be statically known.")
            if mine is not None:
                raise ValueError("A single Mosaic subkernel cannot contain multiple core "
                                 "sharding dimensions.")
            if size is not None and size != bound:
                raise ValueError("The iteration bound corresponding to the core-parallel "
                                 "dimension be the same across all subkernels.")
            mine = bound
        size = mine
    return size


def kernel_facts(module: ir.Module, *, collective_id=None, vmem_limit_bytes=None,
                 tiling=None) -> dict:
    """What the backend_config needs of the module (has_communication, device_type,
    active_core_count), after JAX's checks of the parameters against it (ValueError)."""
    has_communication, has_custom_barrier = tpu.private_has_communication(module.operation)
    if has_custom_barrier:
        if collective_id is None:
            raise ValueError("collective_id has to be specified when using a custom barrier")
    elif collective_id is not None:
        raise ValueError("collective_id has to be unspecified or None when not using a "
                         "custom barrier")
    if vmem_limit_bytes is not None and (not isinstance(vmem_limit_bytes, int)
                                         or isinstance(vmem_limit_bytes, bool)):
        raise ValueError(f"vmem_limit_bytes must be an int: provided with a "
                         f"{type(vmem_limit_bytes)}.")
    device_type = _device_type(module)
    if tiling is not None and device_type != "sparsecore":
        raise ValueError("explicit tiling is only supported for SparseCore kernels.")
    return {"has_communication": bool(has_communication), "device_type": device_type,
            "active_core_count": _active_core_count(module)}


def custom_call_config(module: ir.Module, params: dict, target_version: int) -> str:
    """The backend_config JSON of a tpu_custom_call op with `params`, the module
    serialized at `target_version` (0: the op's ir_version, else the newest)."""
    facts = kernel_facts(module, collective_id=params["collective_id"],
                         vmem_limit_bytes=params["vmem_limit_bytes"], tiling=params["tiling"])
    version = int(target_version) or int(params["ir_version"] or 0)
    body, _ = serialize(module, version)
    layout = params["needs_layout_passes"]
    return config_json(
        body, has_communication=facts["has_communication"],
        collective_id=params["collective_id"], cost_estimate=params["cost_estimate"],
        needs_hlo_passes=bool(params["needs_hlo_passes"]),
        serialization_format=params["serialization_format"],
        # (TensorCore kernels always need them)
        needs_layout_passes=bool(layout) or facts["device_type"] is None,
        shape_invariant_numerics=bool(params["shape_invariant_numerics"]),
        allow_input_fusion=params["allow_input_fusion"],
        internal_scratch_in_bytes=params["internal_scratch_in_bytes"],
        output_memory_spaces=params["output_memory_spaces"],
        input_memory_spaces=params["input_memory_spaces"],
        disable_bounds_checks=bool(params["disable_bounds_checks"]),
        disable_semaphore_checks=bool(params["disable_semaphore_checks"]),
        tiling=params["tiling"], device_type=facts["device_type"],
        vmem_limit_bytes=params["vmem_limit_bytes"], flags=params["flags"],
        active_core_count=facts["active_core_count"])


def lower_tpu_custom_calls(module: ir.Module, target_version: int) -> int:
    """Replaces every jaxpr.tpu_custom_call of `module` by its stablehlo.custom_call;
    returns how many."""
    calls = [op for op in nested_ops(module) if op.name == TpuCustomCallOp.OPERATION_NAME]
    for call in calls:
        params = op_params(call)
        config = custom_call_config(kernel_module(params["module"]), params, target_version)
        new = emit_custom_call(call, list(call.operands), [r.type for r in call.results],
                               config, kernel_name=params["kernel_name"],
                               effects=params["has_side_effects"] or "pure",
                               aliases=params["input_output_aliases"],
                               metadata=params["kernel_metadata"])
        for old, res in zip(call.results, new.results):
            old.replace_all_uses_with(res)
        call.erase()
    return len(calls)


__all__ = ["custom_call_config", "kernel_facts", "kernel_module", "lower_tpu_custom_calls"]
