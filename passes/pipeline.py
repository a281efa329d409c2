"""jit's compile pipeline: the passes a traced `jaxpr` module goes through, per platform.

    pipeline_for(record)    # [(flag, options), ...] for runtime's platform record

A platform record (mjax.runtime.backend.PlatformRecord, read here by its fields, so this
module imports nothing of the runtime) says what differs between targets: the Pallas
compiler that takes kernels with interpret=False (Mosaic on a TPU, Triton on a GPU) and
the `platform` option of jaxpr-to-stablehlo (the CPU refuses what XLA's CPU would ignore;
GPUs pick cuSOLVER kernels).

After lowering, a jit's last rewrites run at the `before-print` point
(`print_for_backend`): `--stablehlo-layout-modes`, `--stablehlo-memory-kinds` and
`--stablehlo-host-callbacks`, each where the program needs it. Then the module is printed
once, for the backend, with what the backend must know of it beside the text: the host
callbacks' sites and, over several devices, the partitioner.
"""
from __future__ import annotations

from typing import NamedTuple

from jaxlib.mlir import ir

from mjax.dialect.symbols import main_function
from mjax.passes.registry import PASSES, run_pipeline
from mjax.passes.stablehlo_host_callbacks import StablehloHostCallbacksPass

# Expand transformations, inline calls, lower, then let upstream MLIR clean up; each use
# of an implicit broadcast then gets its own, as JAX's lowering emits them (XLA's
# simplifier treats a shared one differently: see passes/broadcast_per_use.py).
# Pallas calls still there after expansion run as loops over their grids (interpret mode).
# Refs (mjax.new_ref) are discharged once calls are inlined (a ref crosses no call);
# functions with refs of their own only, first, so transformations see values.
# (jaxpr-inline's prune: functions --jaxpr-dce would erase go first, and a function
# called once is moved into its caller instead of copied.)
PIPELINE = [("jaxpr-discharge-state", "local-only=true")] + [
    (name, "prune=true" if name == "jaxpr-inline" else "")
    for name in ("jaxpr-expand-transforms", "jaxpr-pallas-interpret", "jaxpr-inline",
                 "jaxpr-discharge-state", "jaxpr-dce", "jaxpr-to-stablehlo",
                 "canonicalize", "cse", "stablehlo-broadcast-per-use", "symbol-dce")]


def kernel_pipeline(pallas_pass, platform_version: str | None = None) -> list:
    """PIPELINE with a Pallas compiler's (flag, options) just before the interpreter, which
    then runs only the kernels that ask for interpret mode; PIPELINE when there is none
    (or its pass is not registered in this build). With the `platform_version` of the
    device compiled for, a compiler pass's `options_on_device(platform_version)` replaces
    the options (Mosaic: the serde version that chip reads)."""
    if pallas_pass is None or pallas_pass[0] not in PASSES:
        return PIPELINE
    flag, options = pallas_pass
    on_device = getattr(PASSES[flag], "options_on_device", None)
    if platform_version is not None and on_device is not None:
        options = on_device(platform_version)
    at = [name for name, _ in PIPELINE].index("jaxpr-pallas-interpret")
    return PIPELINE[:at] + [(flag, options)] + PIPELINE[at:]


def pipeline_for(record, platform_version: str | None = None) -> list:
    """The pipeline that compiles a user's program for `record`'s platform: its Pallas
    compiler (kernel_pipeline) and its lowering option. Where no compiler is there to
    take kernels with interpret=False, the interpreter is told the platform and refuses
    them (on the CPU with JAX's ValueError): they are never silently interpreted. IREE
    (no lowering option) keeps PIPELINE's defaults. `platform_version`: the device's
    (kernel_pipeline), when compiling for the chip this process runs on."""
    pipeline = kernel_pipeline(record.pallas_pass, platform_version)
    if not record.lowering_option:
        return pipeline
    options = {"jaxpr-to-stablehlo": record.lowering_option}
    if pipeline is PIPELINE:
        options["jaxpr-pallas-interpret"] = f"platform={record.name}"
    return [(name, options.get(name, opt)) for name, opt in pipeline]


class Printed(NamedTuple):
    """A lowered module printed for the backend: its text (with locations), the module
    (XLA takes a program calling Python as a module object), the sites of its host
    callbacks (stablehlo_host_callbacks.HostCallSite, in the order XLA calls them), and
    over several devices its `partitioning`."""
    text: str
    module: ir.Module
    callbacks: list
    partitioning: tuple | None


def print_for_backend(module: ir.Module, finishing=(), partitioned: bool = False) -> Printed:
    """Runs the `finishing` passes (the before-print point) on the lowered `module`, then
    prints it once; `partitioned`: compiled over several devices (its partitioning)."""
    sites = []
    if finishing:
        run_pipeline(module, list(finishing))
        for p in finishing:
            if isinstance(p, StablehloHostCallbacksPass):
                sites = p.sites
    return Printed(module.operation.get_asm(enable_debug_info=True), module, sites,
                   partitioning(module) if partitioned else None)


def partitioning(module: ir.Module) -> tuple[str, tuple[bool, ...]]:
    """(XLA's partitioner for `module`, per result of @main whether XLA may choose its
    sharding). Shardy's form (an `sdy.mesh`), or a module with no `mhlo.sharding` at all,
    is partitioned by Shardy (as JAX's default); XLA's `mhlo.sharding` form by GSPMD,
    which may choose the shardings of the results that have none."""
    for op in module.body.operations:
        if op.operation.name == "sdy.mesh":
            return "shardy", (True,)
    main = main_function(module)
    flags = _unsharded_results(main) if main is not None else ()
    if all(flags) and not _any_sharding(module):
        return "shardy", (True,)
    return "gspmd", flags or (True,)


def _unsharded_results(main) -> tuple[bool, ...]:
    if "res_attrs" not in main.attributes:
        n = len(ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).results)
        return (True,) * n
    return tuple("mhlo.sharding" not in ir.DictAttr(d)
                 for d in ir.ArrayAttr(main.attributes["res_attrs"]))


def _any_sharding(module: ir.Module) -> bool:
    """Whether some op, or some function's argument or result, has an `mhlo.sharding`."""
    found = []

    def visit(op):
        attrs = op.attributes
        if "mhlo.sharding" in attrs or any(
                name in attrs and any("mhlo.sharding" in ir.DictAttr(d)
                                      for d in ir.ArrayAttr(attrs[name]))
                for name in ("arg_attrs", "res_attrs")):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return bool(found)


__all__ = ["PIPELINE", "Printed", "kernel_pipeline", "partitioning", "pipeline_for",
           "print_for_backend"]
