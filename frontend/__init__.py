"""mjax: JAX's programming model as an MLIR-dialect compiler toolkit.

    import mjax as jax
    import mjax.numpy as jnp

    @jax.jit
    def f(x):
        return jnp.sin(x) * 2
"""
from mjax.config import config
from mjax.config import (checking_leaks, debug_infs, debug_nans, debug_key_reuse,  # noqa: F401
                         default_device, default_matmul_precision, default_prng_impl,
                         enable_checks, enable_x64, explain_cache_misses, legacy_prng_key,
                         log_compiles, numpy_dtype_promotion, numpy_rank_promotion,
                         threefry_partitionable)
from mjax import dtypes
from mjax.array import Array
from mjax.api import (ShapeDtypeStruct, block_until_ready, default_backend, device_count,
                      device_get, device_put, devices, disable_jit, eval_shape, jit,
                      local_device_count, local_devices, make_jaxpr, typeof)
from mjax.api import process_count, process_index  # noqa: F401
from mjax.ad import (checkpoint, custom_jvp, custom_vjp, grad, hessian, jacfwd, jacobian,
                     jacrev, jvp, linearize, remat, value_and_grad, vjp)
from mjax.ad import checkpoint_policies  # noqa: F401
from mjax.ad import fwd_and_bwd  # noqa: F401
from mjax import ad_checkpoint  # noqa: F401
from mjax.batching import vmap
from mjax.pmap import pmap
from mjax.shard_map import shard_map
from mjax import distributed  # noqa: F401
from mjax.core import named_scope
from mjax import errors, tree_util, lax, numpy, dlpack, profiler, sharding  # noqa: F401
from mjax.sharding import make_mesh, set_mesh, NamedSharding, P  # noqa: F401
from mjax.global_arrays import (make_array_from_callback,  # noqa: F401
                                make_array_from_process_local_data,
                                make_array_from_single_device_arrays)
from mjax.lax.sharding import reshard  # noqa: F401
from mjax import nn, scipy  # noqa: F401  (after numpy: they build on it)
from mjax import ops, tree  # noqa: F401
from mjax import random  # noqa: F401  (after numpy and nn: samplers build on them)
from mjax.lax import stop_gradient  # noqa: F401
from mjax.tree_util import tree_map, tree_leaves, tree_structure  # noqa: F401
from mjax.dtypes import float0  # noqa: F401
from mjax import debug, experimental  # noqa: F401  (host callbacks: mjax.callbacks)
from mjax import export  # noqa: F401
from mjax.callbacks import effects_barrier, pure_callback  # noqa: F401
# JAX's modules for extensions and libraries (top floor: nothing in mjax imports them).
from jaxlib.xla_client import Device  # noqa: F401  (jaxlib's device class, as JAX's)
from mjax import (api_util, custom_derivatives, extend, ffi, flatten_util,  # noqa: F401
                  image, interpreters, lib, monitoring, stages, typing, version)
from mjax.version import __version__, __version_info__  # noqa: F401  (the JAX release mjax follows)
from mjax.jax_alias import alias_jax  # noqa: F401

__all__ = ["config", "dtypes", "checking_leaks", "debug_infs", "debug_nans",
           "debug_key_reuse", "default_device", "default_matmul_precision",
           "default_prng_impl", "enable_checks", "enable_x64", "explain_cache_misses",
           "legacy_prng_key", "log_compiles", "numpy_dtype_promotion",
           "numpy_rank_promotion", "threefry_partitionable", "Array", "ShapeDtypeStruct", "block_until_ready",
           "default_backend", "device_count", "device_put", "devices", "disable_jit",
           "eval_shape", "jit", "local_device_count", "local_devices", "make_jaxpr",
           "errors", "tree_util", "lax", "numpy", "nn", "scipy", "stop_gradient", "float0", "checkpoint",
           "custom_jvp", "custom_vjp", "grad", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "remat", "value_and_grad", "vjp", "vmap", "shard_map",
           "fwd_and_bwd"]
