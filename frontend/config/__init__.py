"""Configuration: one registry of options, each with a default, validation and a docstring.

Users (JAX's names and ways):

    mjax.config.update("jax_enable_x64", True)      # process-wide
    mjax.config.jax_enable_x64                      # read (unknown names: AttributeError)
    mjax.config.values                              # {name: value} of every option
    with mjax.enable_x64(True): ...                 # thread-local context managers
    JAX_ENABLE_X64=1 python prog.py                 # or MJAX_ENABLE_X64=1 (wins)
    python -m mjax.config                           # every option, value and its source

Registering an option (the stable API other modules use; call at import time):

    from mjax.config import bool_option, enum_option, int_option, string_option, option
    impl = enum_option("jax_default_prng_impl", "threefry2x32",
                       ("threefry2x32", "rbg", "unsafe_rbg"), "The default PRNG.",
                       affects_tracing=True)
    impl.value                         # the current value (also config.read(name))
    with impl("rbg"): ...              # a context manager, like JAX's config States

`affects_tracing=True` puts the option's value in jit's cache key (flipping it retraces).
`on_change=fn` is called with the new process-wide value (e.g. to configure the runtime).
The environment variable of `jax_foo` is `JAX_FOO` (or `MJAX_FOO`); of `mjax_foo`,
`MJAX_FOO`.
"""
from __future__ import annotations

import dataclasses
import itertools
import logging
import sys

from mjax.config.registry import (Config, Option, State, bool_option, config,  # noqa: F401
                                  enum_option, float_option, int_option, option,
                                  string_option)
from mjax.config import jax_options  # noqa: F401  (JAX's remaining options)
from mjax.passes import user_passes
from mjax.runtime import (compilation_cache, ir_dump, jaxlib_process, set_default_platform,
                          tpu, xla)
from mjax.runtime.backend import backends_are_initialized, configured_platform


def _device(v):
    if v is None or isinstance(v, str) or hasattr(v, "platform") or hasattr(v, "_device"):
        return v
    raise ValueError(f"jax.default_device must be passed either a Device object (e.g. "
                     f"`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or "
                     f"'gpu', got: {v}")


# ---- the options ------------------------------------------------------------------------
# Defaults are jax 0.10.2's. JAX's top-level context managers are the returned States.
enable_x64 = bool_option(
    "jax_enable_x64", False,
    "Enable 64-bit types (int64, float64, complex128); off, they become 32-bit.",
    affects_tracing=True)
numpy_dtype_promotion = enum_option(
    "jax_numpy_dtype_promotion", "standard", ("standard", "strict"),
    "Implicit dtype promotion in mjax.numpy: 'standard' (JAX's lattice) or 'strict' "
    "(only weak Python scalars promote; anything else raises TypePromotionError).",
    affects_tracing=True)
numpy_rank_promotion = enum_option(
    "jax_numpy_rank_promotion", "allow", ("allow", "warn", "raise"),
    "Implicit rank promotion (broadcasting a lower-rank operand) in mjax.numpy: "
    "'allow', 'warn' or 'raise'.", affects_tracing=True)
_PRECISIONS = ("default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
               "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
               "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32",
               "BF16_BF16_BF16", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
               "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32",
               "F64_F64_F64")
default_matmul_precision = enum_option(
    "jax_default_matmul_precision", None, _PRECISIONS,
    "Precision of matmuls and convolutions whose precision argument is None: "
    "'default'/'bfloat16', 'high'/'tensorfloat32', 'highest'/'float32', or a "
    "dot algorithm name; None leaves the backend's default.",
    optional=True, affects_tracing=True)
default_device = option(
    "jax_default_device", None,
    "Device (from mjax.devices()) that uncommitted computations run on; None: the first.",
    lambda v: _device(v), affects_tracing=True,
    parse_env=lambda t: None if t in ("", "None") else t)
debug_nans = bool_option(
    "jax_debug_nans", False,
    "Raise FloatingPointError when an operation produces a NaN (under jit: the "
    "function is re-run op by op to name the primitive and the line).")
debug_infs = bool_option(
    "jax_debug_infs", False,
    "Raise FloatingPointError when an operation produces an inf (as jax_debug_nans).")
remat3 = bool_option(
    "jax_remat3", False,
    "JAX's newer checkpoint: only checkpoint_name'd values (save_only_these_names, "
    "save_any_names_but_these, everything_saveable) and dots (dots_saveable, "
    "dots_with_no_batch_dims_saveable) may be saved; other policies rematerialize "
    "everything, and checkpointed functions take (*args, **kwargs).",
    affects_tracing=True)
log_compiles = bool_option(
    "jax_log_compiles", False,
    "Log (logging.WARNING, logger 'mjax.api') each jit compilation with its argument "
    "types; otherwise at DEBUG level.")
disable_jit_state = bool_option(
    "jax_disable_jit", False, "Run jit-decorated functions op by op (debugging).")
check_tracer_leaks = bool_option(
    "jax_check_tracer_leaks", False,
    "Check for tracers that escape the transformation that made them (debugging).")
enable_checks = bool_option(
    "jax_enable_checks", False,
    "Extra internal consistency checks (debugging): the IR is re-verified after every "
    "compile pass, as mjax_verify_each_pass does.")
explain_cache_misses = bool_option(
    "jax_explain_cache_misses", False, "Log why a jit cache miss happened.")
default_prng_impl = enum_option(
    "jax_default_prng_impl", "threefry2x32", ("threefry2x32", "rbg", "unsafe_rbg"),
    "The PRNG implementation of mjax.random.key/PRNGKey: 'threefry2x32', 'rbg' or "
    "'unsafe_rbg'.", affects_tracing=True)
threefry_partitionable = bool_option(
    "jax_threefry_partitionable", True,
    "Generate threefry random bits in a way that shards without communication (changes "
    "the bits drawn for a key).", affects_tracing=True)
debug_key_reuse = bool_option(
    "jax_debug_key_reuse", False,
    "Raise KeyReuseError when a PRNG key is used twice.", affects_tracing=True)
enable_custom_prng = bool_option(
    "jax_enable_custom_prng", False,
    "PRNGKey makes typed keys (key<impl>) instead of raw uint32 key data (deprecated in "
    "JAX, where it is a context manager too).", affects_tracing=True)
no_tracing = bool_option(
    "jax_no_tracing", False,
    "Refuse to trace a function for jit (RuntimeError): a guard against re-tracing.")
no_execution = bool_option(
    "jax_no_execution", False,
    "Refuse to run any compiled computation, jitted or eager (RuntimeError).")
allow_f16_reductions = bool_option(
    "jax_allow_f16_reductions", True,
    "If False, lax.reduce_sum of float16 or bfloat16 values raises ValueError.",
    affects_tracing=True)
softmax_custom_jvp = bool_option(
    "jax_softmax_custom_jvp", False,
    "JAX's switch to a custom_jvp rule for nn.softmax; mjax differentiates softmax "
    "through its ops either way (the rule's derivatives, up to rounding).")
legacy_prng_key = enum_option(
    "jax_legacy_prng_key", "allow", ("allow", "warn", "error"),
    "What to do with raw uint32 PRNG keys (PRNGKey): 'allow', 'warn' or 'error'.")


def _dump_setting(field):
    return lambda value: setattr(ir_dump.settings, field, value)


dump_ir_to = string_option(
    "jax_dump_ir_to", "",
    "Directory to write every compiled program to, as StableHLO text "
    "(jax_ir0000_<module>_compile.mlir); 'sponge': $TEST_UNDECLARED_OUTPUTS_DIR; '': off.",
    on_change=_dump_setting("to"))
dump_ir_modes = string_option(
    "jax_dump_ir_modes", "stablehlo",
    "Comma-separated kinds of dump: 'stablehlo' (JAX's 'jaxpr', 'jaxpr_html' and "
    "'eqn_count_pprof' are accepted, and warned about: mjax does not write them).",
    on_change=_dump_setting("modes"))
include_debug_info_in_dumps = bool_option(
    "jax_include_debug_info_in_dumps", True,
    "Keep source locations in IR dumps.", on_change=_dump_setting("debug_info"))


def _set_cache_dir(value):
    compilation_cache.settings.directory = value or None


def _set_cache_min_time(value):
    compilation_cache.settings.min_compile_time_secs = value


def _set_cache_min_size(value):
    compilation_cache.settings.min_entry_size_bytes = value


compilation_cache_dir = string_option(
    "jax_compilation_cache_dir", None,
    "Directory of the persistent (on-disk) compilation cache; None disables it.",
    optional=True, on_change=_set_cache_dir)
persistent_cache_min_compile_time_secs = float_option(
    "jax_persistent_cache_min_compile_time_secs", 1.0,
    "Only executables that took at least this long to compile are cached on disk.",
    on_change=_set_cache_min_time)
persistent_cache_enable_xla_caches = string_option(
    "jax_persistent_cache_enable_xla_caches", "xla_gpu_per_fusion_autotune_cache_dir",
    "XLA's own GPU caches (per-fusion autotuning results) kept under the compilation "
    "cache directory: 'none', 'all' or their XLA flag names. Accepted as in JAX; they "
    "hold GPU autotuning only, which mjax's XLA compiles do not keep on disk, so it has "
    "no effect on what mjax caches.")


def _set_logging_level(value):
    """As JAX: the level (and, unless NOTSET, a stderr handler) on mjax's root logger,
    and jaxlib's C++ log level; None leaves the level as it is."""
    jaxlib_process.set_log_level(value)
    logger = logging.getLogger("mjax")
    logger.removeHandler(_log_handler)
    if value is None:
        return
    logger.setLevel(value)
    if value != "NOTSET":
        logger.addHandler(_log_handler)


def _make_log_handler():
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(
        "{levelname}:{asctime}:{name}:{lineno}: {message}", style="{"))
    return handler


_log_handler = _make_log_handler()
logging_level = enum_option(
    "jax_logging_level", "NOTSET", ("NOTSET", "DEBUG", "INFO", "WARNING", "ERROR",
                                    "CRITICAL"),
    "Logging level of all mjax loggers ('mjax' and below), with a stderr handler unless "
    "'NOTSET'; None leaves the level unset. Also jaxlib's C++ log level (unless NOTSET).",
    optional=True, on_change=_set_logging_level)
persistent_cache_min_entry_size_bytes = int_option(
    "jax_persistent_cache_min_entry_size_bytes", 0,
    "Only executables at least this large are cached on disk.",
    on_change=_set_cache_min_size)


def _set_platforms(value):
    # (mjax_backend is registered below: absent while JAX_PLATFORMS is read at import)
    if config._values.get("mjax_backend") != "iree":
        set_default_platform(value.split(",")[0].strip() if value else None)


def _set_backend(value):
    set_default_platform("iree" if value == "iree" else
                         (platforms.value.split(",")[0].strip() if platforms.value else None))
    chosen = configured_platform()       # (None: discovered later; never IREE)
    if value == "xla" and chosen is not None and chosen.backend == "iree":
        set_default_platform("cpu")      # 'xla' chosen over MJAX_BACKEND=iree


platforms = string_option(
    "jax_platforms", None,
    "Comma-separated platforms in order of preference ('cpu', 'tpu', 'cuda', ...); the "
    "first is the default XLA platform. None: as JAX, the installed and usable platform "
    "of highest priority (cuda/rocm, then tpu, then cpu).", optional=True,
    on_change=_set_platforms)
platform_name = string_option(
    "jax_platform_name", "",
    "Deprecated (JAX keeps it for old code): the default platform, as the first entry of "
    "jax_platforms; '' leaves jax_platforms' choice.",
    on_change=lambda v: _set_platforms(v or platforms.value))   # ('': jax_platforms')
backend = enum_option(
    "mjax_backend", "xla", ("xla", "iree"),
    "The compiler and runtime: 'xla' (jaxlib's PJRT) or 'iree' (the iree extra). Also "
    "MJAX_BACKEND, or jit(f, backend='iree') for one function.",
    affects_tracing=True, on_change=_set_backend)


def _cloud_tpu_defaults() -> None:
    """What JAX's cloud_tpu_init sets at `import jax` on a Cloud TPU VM (libtpu installed
    and a chip attached): jax_platforms 'tpu,cpu', unless chosen (JAX_PLATFORMS, or
    mjax's MJAX_PLATFORM/MJAX_BACKEND), so a chip that does not open (another process
    holds it) is an error, as in JAX; and the PJRT client's framework options."""
    if not tpu.cloud_tpu_vm():
        return
    if platforms.value is None and configured_platform() is None:
        config.update("jax_platforms", "tpu,cpu")
    if config.read("jax_pjrt_client_create_options") is None:
        config.update("jax_pjrt_client_create_options", tpu.client_create_options())


_cloud_tpu_defaults()
traceback_filtering = enum_option(
    "jax_traceback_filtering", "auto",
    ("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto"),
    "How mjax's own frames are hidden from tracebacks of errors raised in user code.")
def _before_backends(name: str, value) -> None:
    """Hands the runtime an option it reads once, when it makes its first backend."""
    if backends_are_initialized():
        if config._values.get(name) == value:
            return
        raise RuntimeError(
            f"{name} config should be updated before backends are initialized i.e. before "
            f"any JAX operation is executed. You should initialize this config immediately "
            f"after `import jax`.")
    xla.set_num_cpu_devices(value)


num_cpu_devices = int_option(
    "jax_num_cpu_devices", -1,
    "Number of CPU devices; -1: the backend's default (XLA_FLAGS "
    "--xla_force_host_platform_device_count). Must be set before the first backend.",
    on_change=lambda n: _before_backends("jax_num_cpu_devices", n))
verify_each_pass = bool_option(
    "mjax_verify_each_pass", False,
    "Run jaxpr-verify after every pass when compiling (debugging).")


def _pass_list(value):
    try:
        return user_passes.pass_list(value)
    except TypeError as e:
        raise ValueError(str(e)) from None


extra_passes = option(
    "mjax_extra_passes", (),
    "Users' passes every jit compilation runs, each at its point of the compile pipeline: "
    "mjax.passes.Pass instances, or pipeline text of registered flags "
    "('a,b{opt=1}'); see docs/passes.md.", _pass_list, affects_tracing=True)
# `with mjax.passes.extra(...)`: these passes added to mjax_extra_passes in this thread.
user_passes.set_extra_scope(lambda passes: config.override(
    mjax_extra_passes=config.read("mjax_extra_passes") + passes))


# The XLA frontend attributes of `with set_xla_metadata(...)` (sorted (key, value) pairs,
# or None): part of jit's cache key, as JAX's xla_metadata_context_manager.
xla_metadata = option("_xla_metadata", None, "set_xla_metadata's active attributes",
                      lambda v: v, affects_tracing=True)


class UserContext:
    """A value that is part of jit's cache key: a function traced under one value is
    traced again under another. JAX: the object jax.make_user_context returns."""

    def __init__(self, state: State):
        self._state = state

    @property
    def value(self):
        return self._state.value

    def get_global(self):
        return config._values[self._state._option.name]

    def set_global(self, new_value) -> None:
        config.update(self._state._option.name, new_value)

    def __call__(self, new_value):
        return config.override(**{self._state._option.name: new_value})


# The platform `lower(lowering_platforms=)` and `export(platforms=)` trace and lower for,
# where it is not the default backend's (mjax.tracing.lowering.lowering_for_platform sets it): a
# function traced for another platform is another trace (platform_dependent, linalg).
lowering_platform = option("_lowering_platform", None, "the platform programs are lowered "
                           "for (lowering_for_platform)", lambda v: v, affects_tracing=True)

def _interpret_params(v):
    if v is not None and not dataclasses.is_dataclass(v):
        raise ValueError(f"mjax_pallas_tpu_interpret_mode must be None or a "
                         f"pltpu.InterpretParams, got {v!r}")
    return v


# (JAX: config pallas_tpu_interpret_mode_context_manager; registered here with the other
# options, so every process lists it, not only those that imported Pallas)
pallas_tpu_interpret_mode = option(
    "mjax_pallas_tpu_interpret_mode", None,
    "Forces every pallas_call traced while it is set to run in interpret mode (a "
    "pltpu.InterpretParams; None: as each call says). Set by "
    "pltpu.force_tpu_interpret_mode and pltpu.set_tpu_interpret_mode.",
    _interpret_params, affects_tracing=True)

_user_contexts = itertools.count()


def make_user_context(default_value=None) -> UserContext:
    """A new jit-cache-sensitive context (`with ctx(value): f(x)` re-traces f when the
    value differs from the one it was traced under). JAX: jax.make_user_context."""
    name = f"_user_context_{next(_user_contexts)}"
    return UserContext(option(name, default_value, "a user context (make_user_context)",
                              lambda v: v, affects_tracing=True))


def checking_leaks():
    """Context manager that turns on jax_check_tracer_leaks in this thread."""
    return config.override(jax_check_tracer_leaks=True)


def main() -> None:
    """`python -m mjax.config`: every option, its value and where the value came from."""
    print(config.describe())
