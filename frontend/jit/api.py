"""The names `mjax.jit.api` has always offered, from the modules that now hold them:
jitted.py (jit, disable_jit), jaxpr/api.py (make_jaxpr), staging.py (trace_function,
eval_shape), placement.py (devices, device_put, ...), shape_dtype_struct.py. The logger of
compilations is still named 'mjax.api' (jitted.py)."""
from mjax.jaxpr.api import make_jaxpr  # noqa: F401
from mjax.jit.jitted import _FAST_TREES, Jitted, disable_jit, jit, logger  # noqa: F401
from mjax.arrays.placement import (block_until_ready, default_backend, device_count,  # noqa: F401
                                   device_get, device_put, device_put_value, devices,
                                   local_device_count, local_devices, process_count, process_index,
                                   put_sharded)
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct  # noqa: F401
from mjax.arrays.sharding_types import typeof  # noqa: F401
from mjax.jit.stages import ClosedJaxpr  # noqa: F401
from mjax.tracing.staging import TracedFunction, eval_shape, trace_function  # noqa: F401
