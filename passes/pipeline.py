"""jit's compile pipeline: the passes a traced `jaxpr` module goes through, per platform.

    pipeline_for(record)    # [(flag, options), ...] for runtime's platform record

A platform record (mjax.runtime.backend.PlatformRecord, read here by its fields, so this
module imports nothing of the runtime) says what differs between targets: the Pallas
compiler that takes kernels with interpret=False (Mosaic on a TPU, Triton on a GPU) and
the `platform` option of jaxpr-to-stablehlo (the CPU refuses what XLA's CPU would ignore;
GPUs pick cuSOLVER kernels).
"""
from __future__ import annotations

from mjax.passes.registry import PASSES

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


__all__ = ["PIPELINE", "kernel_pipeline", "pipeline_for"]
