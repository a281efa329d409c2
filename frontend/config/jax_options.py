"""JAX 0.10.2's remaining config options, so that code setting them runs on mjax.

Each option has JAX's name, default and validation. What setting it does in mjax is one of:
- **Acts**: mjax implements it (the compile options XLA gets, the persistent cache, seeds,
  64-bit dtype requests, source paths in locations).
- **Accepted**: the option tunes something mjax has no counterpart for on the machines it
  runs on (GPU/TPU devices and kernels, multi-host transports, profile-guided
  compilation), or picks between two of JAX's internal implementations of one behaviour;
  any valid value is kept and changes nothing, as the GPU options change nothing for JAX
  on a CPU.
- **Default only**: the option switches a JAX behaviour mjax does not implement; setting
  a value other than the default raises NotImplementedError naming it.
"""
from __future__ import annotations

import enum

from mjax.config.registry import bool_option, config, int_option, option, string_option
from mjax.runtime import compilation_cache, xla

# ---- acts ---------------------------------------------------------------------------------
_EFFORT_LEVELS = {"UNKNOWN": 0, "O0": 9, "O1": 19, "O2": 29, "O3": 39}


def _effort_level(v):
    """JAX's EffortLevel: its name ('O2'), or the enum itself (whose name is that)."""
    name = getattr(v, "name", v)
    if name in _EFFORT_LEVELS:
        return name
    raise ValueError(f"an effort level must be one of {list(_EFFORT_LEVELS)}, got {v!r}")


def _effort(v) -> float:
    v = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    if v is None or not -1.0 <= v <= 1.0:
        raise ValueError(f"an optimization effort must be a float in [-1, 1], got {v!r}")
    return v


def _build_setting(field, convert=lambda v: v):
    return lambda value: setattr(xla.build_settings, field, convert(value))


option("jax_optimization_level", "UNKNOWN",
       "XLA's optimization effort level for every compilation: 'UNKNOWN' (XLA's "
       "default), 'O0' to 'O3'.", _effort_level,
       on_change=_build_setting("optimization_level", _EFFORT_LEVELS.get))
option("jax_memory_fitting_level", "O2",
       "XLA's effort to fit programs in device memory: 'UNKNOWN', 'O0' to 'O3'.",
       _effort_level, on_change=_build_setting("memory_fitting_level", _EFFORT_LEVELS.get))
option("jax_exec_time_optimization_effort", 0.0,
       "XLA's effort on the compiled program's speed, in [-1, 1] (0: its default).",
       _effort, parse_env=lambda t: _effort(float(t)),
       on_change=_build_setting("exec_time_optimization_effort"))
option("jax_memory_fitting_effort", 0.0,
       "XLA's effort on fitting the program in memory, in [-1, 1] (0: its default).",
       _effort, parse_env=lambda t: _effort(float(t)),
       on_change=_build_setting("memory_fitting_effort"))
bool_option("jax_disallow_mesh_context_manager", False,
            "Make `with mesh:` (deprecated: use jax.set_mesh) raise a RuntimeError.")
bool_option("jax_disable_most_optimizations", False,
            "Compile with XLA's backend optimizations off (faster compiles, slower code).",
            on_change=_build_setting("disable_most_optimizations"))
bool_option("jax_compiler_enable_remat_pass", True,
            "Let XLA rematerialize values to save memory; False disables its "
            "rematerialization pass.", on_change=_build_setting("enable_remat_pass"))


def _cache_setting(field):
    return lambda value: setattr(compilation_cache.settings, field, value)


bool_option("jax_enable_compilation_cache", True,
            "Use the persistent compilation cache when jax_compilation_cache_dir is set.",
            on_change=_cache_setting("enabled"))
int_option("jax_compilation_cache_max_size", -1,
           "Size limit of the persistent cache directory in bytes: the least recently "
           "used entries are deleted past it; -1: no limit, 0: no caching.",
           on_change=_cache_setting("max_size"))
bool_option("jax_raise_persistent_cache_errors", False,
            "Raise errors reading or writing the persistent cache instead of ignoring "
            "them.", on_change=_cache_setting("raise_errors"))
int_option("jax_random_seed_offset", 0,
           "Added to every seed a key is made from (random.key, random.PRNGKey).",
           affects_tracing=True)


class ExplicitX64Mode(enum.IntEnum):
    """What a 64-bit dtype asked for while jax_enable_x64 is off does (JAX's values)."""
    WARN = 1       # warn, and use the 32-bit dtype
    ERROR = 2      # ValueError
    ALLOW = 3      # a 64-bit array (not implemented in mjax)


def _x64_mode(v) -> ExplicitX64Mode:
    """A mode from its member, its name ('warn', any case) or its value."""
    name = getattr(v, "name", v)
    if isinstance(name, str) and name.upper() in ExplicitX64Mode.__members__:
        return ExplicitX64Mode[name.upper()]
    if isinstance(v, int) and v in tuple(ExplicitX64Mode):
        return ExplicitX64Mode(v)
    raise ValueError(f"jax_explicit_x64_dtypes must be 'warn', 'error' or 'allow', got {v!r}")


def _x64_mode_supported(value) -> None:
    if value == ExplicitX64Mode.ALLOW:
        raise NotImplementedError("jax_explicit_x64_dtypes='allow' (64-bit arrays while "
                                  "jax_enable_x64 is off) is not implemented in mjax")


option("jax_explicit_x64_dtypes", ExplicitX64Mode.WARN,
       "A 64-bit dtype asked for while jax_enable_x64 is off: 'warn' (and use the 32-bit "
       "one) or 'error' (ValueError); 'allow' is not implemented.", _x64_mode,
       affects_tracing=True, on_change=_x64_mode_supported,
       on_override=lambda v: v is None or _x64_mode_supported(v))
string_option("jax_hlo_source_file_canonicalization_regex", None,
              "A regular expression whose matches are removed from source file paths in "
              "op locations (and so in XLA's op metadata).", optional=True,
              affects_tracing=True)


# ---- accepted: no counterpart on the machines mjax runs on, or an internal choice -----
_ACCEPTED = [
    # (name, default, kind) — GPU/TPU/ROCm/oneAPI devices, kernels and libraries
    ("jax_cuda_visible_devices", "all", str), ("jax_rocm_visible_devices", "all", str),
    ("jax_oneapi_visible_devices", "all", str), ("jax_use_magma", "auto", str),
    ("jax_threefry_gpu_kernel_lowering", False, bool),
    ("jax_ragged_dot_use_ragged_dot_instruction", True, bool),
    ("jax_ragged_dot_use_gpu_pallas_triton_lowering", False, bool),
    ("jax_pallas_use_mosaic_gpu", True, bool), ("jax_mosaic_allow_hlo", False, bool),
    ("jax_pallas_verbose_errors", False, bool), ("jax_pallas_enable_debug_checks", False, bool),
    ("jax_pallas_poison_buffers", False, bool), ("jax_use_emit_pipeline_primitive", False, bool),
    ("jax_bcoo_cusparse_lowering", False, bool), ("jax_mock_gpu_topology", "", str),
    ("mock_num_gpu_processes", 0, int),
    # multi-host transports, coordination and services
    ("jax_cpu_collectives_implementation", "gloo", str),
    ("jax_cpu_get_global_topology_timeout_minutes", 5, int),
    ("jax_cpu_get_local_topology_timeout_minutes", 2, int),
    ("jax_cross_host_transfer_socket_address", "", str),
    ("jax_cross_host_transfer_timeout_seconds", None, int),
    ("jax_cross_host_transfer_transfer_size", None, int),
    ("jax_cross_host_transport_addresses", "", str),
    ("jax_force_dcn_cross_host_transfers", False, bool),
    ("jax_share_binary_between_hosts", False, bool),
    ("jax_share_binary_between_hosts_timeout_ms", 1200000, int),
    ("jax_sort_devices_by_process_index", True, bool), ("jax_distributed_debug", False, bool),
    ("jax_enable_preemption_service", True, bool), ("jax_enable_recoverability", False, bool),
    ("jax_pjrt_client_create_options", None, object), ("jax_backend_target", "", str),
    ("jax_xla_backend", "", str), ("jax_check_proxy_envs", True, bool),
    # profile-guided and profile-versioned compilation (GPU/TPU)
    ("jax_enable_pgle", False, bool), ("jax_pgle_profiling_runs", 3, int),
    ("jax_pgle_aggregation_percentile", 90, int),
    ("jax_compilation_cache_expect_pgle", False, bool), ("jax_xla_profile_version", 0, int),
    # cache-key and dispatch details of JAX's own implementation
    ("jax_compilation_cache_include_metadata_in_key", False, bool),
    ("jax_compilation_cache_check_contents", False, bool),
    ("jax_remove_custom_partitioning_ptr_from_cache_key", False, bool),
    ("jax_cpu_enable_async_dispatch", True, bool),
    ("jax_debug_leaked_clients_on_clear_backends", False, bool),
    ("jax_compiler_detailed_logging_min_ops", 10, int),
    # which of JAX's internal implementations computes the same thing
    ("jax_use_direct_linearize", True, bool), ("jax_use_simplified_jaxpr_constants", False, bool),
    ("jax_custom_vjp3", False, bool), ("jax_scan3", False, bool),
    ("eager_constant_folding", False, bool), ("jax_embedded_constants_max_bytes", 32, int),
    ("jax_use_shardy_partitioner", True, bool),
    # how locations, tracebacks and printed jaxprs look
    ("jax_include_full_tracebacks_in_locations", True, bool),
    ("jax_traceback_in_locations_limit", 100, int),
    ("jax_tracer_error_num_traceback_frames", 5, int), ("jax_pprint_use_color", True, bool),
    ("jax_source_url_schema", None, str), ("jax_send_traceback_to_runtime", "off", str),
    # jax2tf's serialization choices (mjax's jax2tf always serializes natively)
    ("jax2tf_default_native_serialization", True, bool),
    ("jax2tf_associative_scan_reductions", False, bool),
    ("jax_export_calling_convention_version", 10, int), ("jax_serialization_version", 0, int),
    ("jax_export_ignore_forward_compatibility", False, bool),
]
_WHY_ACCEPTED = ("accepted for code written for JAX; it has nothing to act on in mjax "
                 "(see mjax/config/jax_options.py)")


def _any(kind, default):
    """A validator of `kind` (None allowed where JAX's default is None)."""
    def parse(v):
        if kind is object or (v is None and default is None):
            return v
        if hasattr(v, "value") and not isinstance(v, (bool, int, float, str)):
            v = v.value                                   # (one of JAX's enums)
        if kind is bool and isinstance(v, (bool, int)) and v in (0, 1):
            return bool(v)
        if kind is int and isinstance(v, int) and not isinstance(v, bool):
            return v
        if kind is str and isinstance(v, str):
            return v
        raise ValueError(f"new {kind.__name__} config value must be of type "
                         f"{kind.__name__}, got {v!r} of type {type(v)}")
    return parse


for _name, _default, _kind in _ACCEPTED:
    option(_name, _default, _WHY_ACCEPTED, _any(_kind, _default),
           parse_env=(lambda t, k=_kind, d=_default: _any(k, d)(
               t.lower() in ("1", "true") if k is bool else k(t))))


# ---- default only: JAX behaviours mjax does not implement ------------------------------------
def _default_only_check(name, value, default, allowed=None) -> None:
    if value != default and (allowed is None or value not in allowed):
        raise NotImplementedError(f"{name}={value!r}: mjax implements this option's "
                                  f"default ({default!r}) only")


_DEFAULT_ONLY = [
    ("jax_check_static_indices", False, bool), ("jax_log_checkpoint_residuals", False, bool),
    ("jax_error_checking_behavior_nan", "ignore", str),
    ("jax_error_checking_behavior_divide", "ignore", str),
    ("jax_error_checking_behavior_oob", "ignore", str),
    ("jax_experimental_unsafe_xla_runtime_errors", False, bool),
    ("jax_high_dynamic_range_gumbel", False, bool), ("jax_thread_guard", False, bool),
    ("jax_array_garbage_collection_guard", None, str),
    ("jax_captured_constants_warn_bytes", 2000000000, int),
    ("jax_captured_constants_report_frames", 0, int), ("jax_debug_log_modules", "", str),
    ("jax_mutable_array_checks", True, bool), ("jax_refs_to_pins", False, bool),
    ("jax_disable_bwd_checks", False, bool), ("jax_disable_vmap_shmap_error", False, bool),
    ("jax_auto_pcast", True, bool), ("check_vma", False, bool),
    ("jax_remove_size_one_mesh_axis_from_type", False, bool),
]
for _name, _default, _kind in _DEFAULT_ONLY:
    option(_name, _default, f"JAX's {_name}: mjax implements its default only "
                            f"({_default!r}); another value raises NotImplementedError.",
           _any(_kind, _default),
           on_change=lambda v, n=_name, d=_default: _default_only_check(n, v, d),
           on_override=lambda v, n=_name, d=_default: v is None or
           _default_only_check(n, v, d))

del _name, _default, _kind
__all__ = ["ExplicitX64Mode", "config"]
