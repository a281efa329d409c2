"""mjax: JAX's programming model as an MLIR-dialect compiler toolkit.

    import mjax as jax
    import mjax.numpy as jnp

    @jax.jit
    def f(x):
        return jnp.sin(x) * 2
"""
# The package's floors, from the ground up (docs/design.md, "Floors"); each module
# imports only from its own floor and those below.
# isort: skip_file
from mjax.config import config
from mjax.config import (check_tracer_leaks, checking_leaks, debug_infs,  # noqa: F401
                         debug_nans, debug_key_reuse,
                         default_device, default_matmul_precision, default_prng_impl,
                         enable_checks, enable_custom_prng, enable_x64, explain_cache_misses,
                         legacy_prng_key,
                         log_compiles, numpy_dtype_promotion, numpy_rank_promotion,
                         threefry_partitionable)
from mjax.config import (allow_f16_reductions, make_user_context,  # noqa: F401
                         no_execution, no_tracing, softmax_custom_jvp)
from mjax import errors, tree_util, tree  # noqa: F401
from mjax import dtypes
from mjax.dtypes import float0  # noqa: F401
from mjax.shape_dtype_struct import ShapeDtypeStruct
from mjax.basearray import Array
from mjax.core import ensure_compile_time_eval, named_scope  # noqa: F401
from mjax.source_info import named_call  # noqa: F401
from mjax.placement import (block_until_ready, default_backend, device_count, device_get,
                            device_put, devices, local_device_count, local_devices)
from mjax.placement import live_arrays, process_count, process_index  # noqa: F401
from mjax.placement import (copy_to_host_async, host_count, host_id,  # noqa: F401
                            host_ids, process_indices)
from mjax.array import Shard  # noqa: F401
from mjax.transfer_guard import (transfer_guard, transfer_guard_device_to_device,  # noqa: F401
                                 transfer_guard_device_to_host,
                                 transfer_guard_host_to_device)
from mjax.sharding_types import typeof
from mjax.staging import eval_shape
from mjax import distributed, dlpack, profiler  # noqa: F401
from mjax import lax  # noqa: F401
from mjax.lax import stop_gradient  # noqa: F401
from mjax.lax.sharding import reshard  # noqa: F401
from mjax.jit_caches import clear_caches
from mjax.jitted import disable_jit, jit
from mjax.jaxpr_api import make_jaxpr
from mjax.ad import (checkpoint, custom_jvp, custom_vjp, grad, hessian, jacfwd, jacobian,
                     jacrev, jvp, linear_transpose, linearize, remat, value_and_grad,
                     vjp)
from mjax.ad import checkpoint_policies  # noqa: F401
from mjax.ad import fwd_and_bwd  # noqa: F401
from mjax import ad_checkpoint  # noqa: F401
from mjax.batching import vmap
from mjax.callbacks import effects_barrier, pure_callback  # noqa: F401
from mjax.spmd.pmap import pmap
from mjax.spmd.shard_map import shard_map
from mjax.spmd.smap import smap  # noqa: F401
from mjax.spmd.global_arrays import (make_array_from_callback,  # noqa: F401
                                     make_array_from_process_local_data,
                                     make_array_from_single_device_arrays)
from mjax import debug  # noqa: F401
from mjax.custom_derivatives import closure_convert, custom_gradient  # noqa: F401
from mjax import numpy  # noqa: F401
from mjax import array_operators  # noqa: F401  (Array's operators call mjax.numpy)
from mjax import ref  # noqa: F401
from mjax.ref import Ref, empty_ref, free_ref, freeze, new_ref  # noqa: F401
from mjax.ref_slice import ds  # noqa: F401
from mjax import nn, ops, scipy, random, test_util  # noqa: F401
from mjax import sharding  # noqa: F401
from mjax.sharding import make_mesh, set_mesh, NamedSharding, P  # noqa: F401
from mjax import experimental, export  # noqa: F401
from mjax import memory  # noqa: F401
from mjax.tree_util import tree_map, tree_leaves, tree_structure  # noqa: F401
# JAX's modules for extensions and libraries (top floor: nothing in mjax imports them).
from jaxlib.xla_client import Device  # noqa: F401  (jaxlib's device class, as JAX's)
from mjax import (api_util, custom_derivatives, extend, ffi, flatten_util,  # noqa: F401
                  custom_batching, image, interpreters, lib, monitoring, stages, typing,
                  version)
from mjax.environment_info import print_environment_info  # noqa: F401
from mjax.version import __version__, __version_info__  # noqa: F401  (the JAX release mjax follows)
from mjax.jax_alias import alias_jax  # noqa: F401

__all__ = ["config", "dtypes", "checking_leaks", "debug_infs", "debug_nans",
           "debug_key_reuse", "default_device", "default_matmul_precision",
           "default_prng_impl", "enable_checks", "enable_custom_prng", "enable_x64",
           "explain_cache_misses",
           "legacy_prng_key", "log_compiles", "numpy_dtype_promotion",
           "numpy_rank_promotion", "threefry_partitionable", "Array", "ShapeDtypeStruct", "block_until_ready",
           "default_backend", "device_count", "device_put", "devices", "disable_jit",
           "eval_shape", "clear_caches", "jit", "local_device_count", "local_devices", "make_jaxpr",
           "errors", "tree_util", "lax", "numpy", "nn", "scipy", "stop_gradient", "float0", "checkpoint",
           "custom_jvp", "custom_vjp", "custom_gradient", "named_call", "grad", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "remat", "value_and_grad", "vjp", "vmap", "shard_map",
           "fwd_and_bwd", "linear_transpose", "Ref", "empty_ref", "free_ref", "freeze",
           "new_ref", "ref"]
