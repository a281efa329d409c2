"""The names `mjax.api` has always offered, from the modules that now hold them:
jitted.py (jit, disable_jit), jaxpr_api.py (make_jaxpr), staging.py (trace_function,
eval_shape), placement.py (devices, device_put, ...), shape_dtype_struct.py. The logger of
compilations is still named 'mjax.api' (jitted.py)."""
from mjax.jaxpr_api import make_jaxpr  # noqa: F401
from mjax.jitted import _FAST_TREES, Jitted, disable_jit, jit, logger  # noqa: F401
from mjax.placement import (block_until_ready, default_backend, device_count,  # noqa: F401
                            device_get, device_put, device_put_value, devices,
                            local_device_count, local_devices, process_count, process_index,
                            put_sharded)
from mjax.shape_dtype_struct import ShapeDtypeStruct  # noqa: F401
from mjax.sharding_types import typeof  # noqa: F401
from mjax.stages import ClosedJaxpr  # noqa: F401
from mjax.staging import TracedFunction, eval_shape, trace_function  # noqa: F401
