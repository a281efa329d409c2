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
import sys as _sys
import typing as _typing

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
from mjax.base import errors, tree_util, tree  # noqa: F401
from mjax.specs import dtypes
from mjax.specs.dtypes import float0  # noqa: F401
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct
from mjax.specs.basearray import Array
from mjax.tracing.core import ensure_compile_time_eval, named_scope  # noqa: F401
from mjax.tracing.source_info import named_call  # noqa: F401
from mjax.arrays.placement import (block_until_ready, default_backend, device_count, device_get,
                                   device_put, devices, local_device_count, local_devices)
from mjax.arrays.placement import live_arrays, process_count, process_index  # noqa: F401
from mjax.arrays.placement import (copy_to_host_async, host_count, host_id,  # noqa: F401
                                   host_ids, process_indices)
from mjax.arrays.array import Shard  # noqa: F401
from mjax.arrays.transfer_guard import (transfer_guard, transfer_guard_device_to_device,  # noqa: F401
                                        transfer_guard_device_to_host,
                                        transfer_guard_host_to_device)
from mjax.arrays.sharding_types import typeof
from mjax.tracing.staging import eval_shape
from mjax.arrays import distributed, dlpack, profiler  # noqa: F401
from mjax import lax  # noqa: F401
from mjax.lax import stop_gradient  # noqa: F401
from mjax.lax.sharding import reshard  # noqa: F401
from mjax.jit.caches import clear_caches
from mjax.jit.jitted import disable_jit, jit
from mjax.jaxpr.api import make_jaxpr
from mjax.jaxpr import objects as _jaxpr_objects
from mjax.ad import (checkpoint, custom_jvp, custom_vjp, grad, hessian, jacfwd, jacobian,
                     jacrev, jvp, linear_transpose, linearize, remat, value_and_grad,
                     vjp)
from mjax.ad import checkpoint_policies  # noqa: F401
from mjax.ad import fwd_and_bwd  # noqa: F401
from mjax.ad import ad_checkpoint  # noqa: F401
from mjax.vmap.batching import vmap
from mjax.callbacks import effects_barrier, pure_callback  # noqa: F401
from mjax.spmd.pmap import pmap
from mjax.spmd.shard_map import shard_map
from mjax.spmd.smap import smap  # noqa: F401
from mjax.spmd.global_arrays import (make_array_from_callback,  # noqa: F401
                                     make_array_from_process_local_data,
                                     make_array_from_single_device_arrays)
from mjax.callbacks import debug  # noqa: F401
from mjax.custom_derivatives import closure_convert, custom_gradient  # noqa: F401
from mjax import numpy  # noqa: F401
from mjax.numpy import array_operators  # noqa: F401  (Array's operators call mjax.numpy)
from mjax import ref  # noqa: F401
from mjax.ref import Ref, empty_ref, free_ref, freeze, new_ref  # noqa: F401
from mjax.specs.ref_slice import ds  # noqa: F401
from mjax import nn, ops, scipy, random, test_util  # noqa: F401
from mjax import sharding  # noqa: F401
from mjax.sharding import make_mesh, set_mesh, NamedSharding, P  # noqa: F401
from mjax import experimental, export  # noqa: F401
from mjax.specs import memory  # noqa: F401
from mjax.base.tree_util import tree_map, tree_leaves, tree_structure  # noqa: F401
# JAX's modules for extensions and libraries (top floor: nothing in mjax imports them).
from jaxlib.xla_client import Device  # noqa: F401  (jaxlib's device class, as JAX's)
from mjax import (api_util, custom_derivatives, extend, ffi, flatten_util,  # noqa: F401
                  custom_batching, image, interpreters, lib, typing, version)
from mjax.base import monitoring  # noqa: F401
from mjax.jit import stages  # noqa: F401
from mjax.environment_info import print_environment_info  # noqa: F401
from mjax.version import __version__, __version_info__  # noqa: F401  (the JAX release mjax follows)
from mjax.jax_alias import alias_jax  # noqa: F401

# JAX's public modules whose file sits in a floor's folder keep their JAX names:
# `import mjax.tree_util`, `from mjax import tree_util` and (under alias_jax)
# `import jax.tree_util` give mjax.base.tree_util itself, the same module object.
# All are imported above, so none is lazy. mjax's own code imports the real paths.
_PUBLIC_MODULES = {
    "ad_checkpoint": "mjax.ad.ad_checkpoint",
    "core": "mjax.tracing.core",
    "debug": "mjax.callbacks.debug",
    "distributed": "mjax.arrays.distributed",
    "dlpack": "mjax.arrays.dlpack",
    "dtypes": "mjax.specs.dtypes",
    "errors": "mjax.base.errors",
    "memory": "mjax.specs.memory",
    "monitoring": "mjax.base.monitoring",
    "profiler": "mjax.arrays.profiler",
    "stages": "mjax.jit.stages",
    "tree": "mjax.base.tree",
    "tree_util": "mjax.base.tree_util",
}
for _name, _real in _PUBLIC_MODULES.items():
    _sys.modules[f"{__name__}.{_name}"] = globals()[_name] = _sys.modules[_real]
del _name, _real, _sys
# jax.core.Atom, what a jaxpr equation's operands are: Union[Var, Literal] of the printed
# jaxpr's objects (mjax.extend.core's), whose module sits floors above mjax.core's.
core.Atom = _typing.Union[_jaxpr_objects.Var, _jaxpr_objects.Literal]

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
