"""The compile pipeline from a traced `jaxpr` module to StableHLO text."""
from __future__ import annotations

import contextlib
import re

from mjax.config import config
from mjax.dialect.functions import building
from mjax.dialect.shape_poly import is_symbolic_dim
from mjax.dialect.values import set_attr
from mjax.passes import run_pipeline
from mjax.passes.module_edits import (alias_donated_inputs,  # noqa: F401  (re-exported)
                                      clone_module, name_main_arguments)
from mjax.passes.user_passes import Checked, instantiate, pass_list
from mjax.passes.rules.export import CALLER_DEVICES
from mjax.passes.rules.op_names import JIT_NAMES
from mjax.arrays.host_callbacks import callbacks_pass, host_callables
from mjax.passes.pipeline import PIPELINE, kernel_pipeline  # noqa: F401  (PIPELINE: re-exported)
from mjax.passes.pipeline import Printed, print_for_backend
from mjax.passes.pipeline import pipeline_for as _pipeline_of
from mjax.passes.registry import PASSES
from mjax.specs.memory_kinds import memory_kinds_pass
from mjax.runtime.backend import (Platform, default_platform, get_backend, lowering_for,
                                  platform_record)


def refuse_symbolic(avals, fun_name: str) -> None:
    """XLA compiles static shapes only: a function traced with symbolic dimensions is
    lowered and exported, then called with concrete shapes (ValueError here, as JAX's
    "Error refining shapes")."""
    symbolic = [str(d) for a in avals for d in a.shape if is_symbolic_dim(d)]
    if symbolic:
        raise ValueError(f"Error refining shapes: {fun_name} has symbolic dimensions "
                         f"({', '.join(dict.fromkeys(symbolic))}) and cannot be compiled; "
                         f"lower or export it (mjax.export.export), and call the export "
                         f"with concrete shapes")


def module_name(fun_name: str) -> str:
    """JAX's name of a jit's module: jit_<name>, `<lambda>` as `_lambda` (its ops keep
    the name: jit(<lambda>)/sin)."""
    name = "jit_" + re.sub(r"\W", "_", fun_name.replace(">", ""))
    JIT_NAMES[name] = fun_name
    return name


def name_as_jax(module, fun_name: str, arg_names=None) -> None:
    """Names a jit's traced module @jit_<name> and its @main's arguments by what they are
    passed to (loc("x"), loc("params['w']")), as JAX's lowering does: jaxpr-to-stablehlo
    then names each op `jit(<name>)/<primitive>`, and XLA its HLO instructions (x.1,
    sin.1) and their op_name metadata."""
    set_attr(module.operation, "sym_name", module_name(fun_name))
    if arg_names:
        name_main_arguments(module, arg_names)


def lower_module(module, user_passes=(), keep_jaxpr: bool = False,
                 backend: str | None = None):
    """Runs the pipeline in place (verifying after each pass when configured), with
    `user_passes` (a list of Pass instances or flags) at their points; `keep_jaxpr`
    returns a copy of the last `jaxpr` form, just before lowering to StableHLO."""
    after = None
    if config.read("mjax_verify_each_pass") or config.read("jax_enable_checks"):
        def after(name, m):
            run_pipeline(m, "jaxpr-verify")
    pipeline = compile_pipeline(user_passes, backend)
    cut = step_names(pipeline).index("jaxpr-to-stablehlo")
    # (one device unless the many-device path said otherwise: spmd/jit.py)
    token = CALLER_DEVICES.set(1) if CALLER_DEVICES.get() is None else None
    try:
        with building():
            run_pipeline(module, pipeline[:cut], after_each=after)
            jaxpr = clone_module(module) if keep_jaxpr else None
            run_pipeline(module, pipeline[cut:], after_each=after)
    finally:
        if token is not None:
            CALLER_DEVICES.reset(token)
    return jaxpr


def step_names(pipeline: list) -> list[str]:
    """The names of a pipeline's steps ((name, options) pairs or Pass instances)."""
    return [s[0] if isinstance(s, tuple) else s.flag for s in pipeline]


def compile_pipeline(user_passes=(), backend: str | None = None) -> list:
    """The pipeline (passes/pipeline.py) that compiles a user's program for the platform
    it is lowered for (runtime.backend.target_platform: the default backend's, or
    lower(lowering_platforms=)'s), with `user_passes` at their points
    (with_user_passes). `backend`: a jit's own (jit(backend='iree') lowers as the IREE
    default does)."""
    record = platform_record(Platform.parse(backend) if backend else None)
    pipeline = _pipeline_of(record, _device_version(record))
    return with_user_passes(pipeline, user_passes) if user_passes else pipeline


@contextlib.contextmanager
def lowering_for_platform(platform: str | None):
    """Traces and lowers for `platform` ('tpu', ...) inside the block, on any machine
    (runtime.backend.lowering_for, and jit's trace cache keyed by it); None: the default
    backend's platform."""
    if platform is None:
        yield
        return
    name = str(Platform.parse(platform))
    with config.override(_lowering_platform=name), lowering_for(name):
        yield


def _device_version(record) -> str | None:
    """The platform version of the device a program is compiled for, when it is this
    process's own (None when lowering for another platform, or none is open yet)."""
    if record.pallas_pass is None or config.read("_lowering_platform") is not None or \
            not hasattr(PASSES.get(record.pallas_pass[0]), "options_on_device") or \
            str(default_platform()) != record.name:
        return None
    return getattr(getattr(get_backend(), "client", None), "platform_version", None)


def lowering_platform_option() -> str:
    """jaxpr-to-stablehlo's `platform` option for the platform programs are lowered for:
    `cpu` refuses what XLA's CPU ignores, `cuda`/`rocm` pick GPU kernels (cuSOLVER)."""
    return platform_record().lowering_option


def with_user_passes(pipeline: list, user_passes) -> list:
    """`pipeline` with users' passes at their points, each followed by the verifier
    (user_passes.Checked): after-tracing first, after-expansion after
    jaxpr-expand-transforms, before-lowering before jaxpr-to-stablehlo, after-lowering
    last (on StableHLO); passes of one point in the order given."""
    passes = [Checked(p) for p in instantiate(pass_list(user_passes))]
    names = step_names(pipeline)
    at = {"after-tracing": 0,
          "after-expansion": names.index("jaxpr-expand-transforms") + 1,
          "before-lowering": names.index("jaxpr-to-stablehlo"),
          "after-lowering": len(pipeline)}
    out = list(pipeline)
    # From the last point back, so the earlier positions stay valid.
    for point in sorted(at, key=at.get, reverse=True):
        out[at[point]:at[point]] = [p for p in passes if p.point == point]
    return out


def pipeline_for(platform: str | None = None) -> list:
    """PIPELINE with the Pallas compiler of `platform` (default: the platform programs are
    lowered for): Triton on a GPU, Mosaic on a TPU; the kernels that ask for interpret
    mode still run as loops over their grids."""
    return kernel_pipeline(platform_record(platform).pallas_pass)


def lower_to_stablehlo(module, donated=None, out_avals=None,
                       annotate=None, user_passes=(), aliases=None, backend=None,
                       finishing=()) -> Printed:
    """Lowers `module` in place and prints it once for the backend (passes/pipeline.py
    print_for_backend; the text keeps locations: XLA turns them into each HLO op's
    metadata, which profiles and HLO dumps show). `donated` (a flag per argument of
    @main) aliases donated inputs to outputs of the same type, so XLA reuses their
    buffers; `aliases` ({argument: result}) pairs some first (a ref's buffer with its
    final value); `finishing`: the passes run last, before the print (layout modes,
    memory kinds, host callbacks: `finishing_passes`). `backend`: the jit's own
    (jit(backend='iree')), where it is not the process's default."""
    lower_module(module, user_passes, backend=backend)
    if donated and any(donated) or aliases:
        alias_donated_inputs(module, donated or (), aliases or {})
    if annotate is not None:        # e.g. shardings of a jit over many devices
        annotate(module)
    with building():
        return print_for_backend(module, [p for p in finishing if p is not None])


def finishing_passes(backend, layout_modes=None, memory_kinds=None) -> list:
    """The passes a lowered program gets before its print: `layout_modes` (a
    StablehloLayoutModesPass: layout.layout_modes_pass), `memory_kinds` (a
    StablehloMemoryKindsPass: memory_kinds.memory_kinds_pass), each where given, and the
    host callbacks' pass for `backend` (callbacks_pass)."""
    return [p for p in (layout_modes, memory_kinds, callbacks_pass(backend))
            if p is not None]


def compile_for_buffers(module, out_avals, kinds=None):
    """The default backend's executable of a program cut out of a traced function (an
    eager vjp's forward and linear parts, ops run for Python's concrete values), its
    parameters in the memory of the buffers it will run on (`kinds`:
    memory_kinds.buffer_kinds; a TPU refuses a buffer in another memory)."""
    backend = get_backend()
    printed = lower_to_stablehlo(module, finishing=finishing_passes(
        backend, memory_kinds=memory_kinds_pass(kinds, (), backend.platform)))
    return compile_printed(printed, backend, out_avals=out_avals)


def compile_printed(printed: Printed, backend, devices=None, **kwargs):
    """`backend`'s executable of a printed program: the callables of its host callbacks
    made for it, the module object where XLA needs it, its partitioning."""
    callbacks = host_callables(printed.callbacks, backend)
    if callbacks:
        kwargs["module"] = printed.module
    if printed.partitioning is not None:
        kwargs["partitioning"] = printed.partitioning
    return backend.compile(printed.text, devices, host_callbacks=callbacks, **kwargs)
