"""`mjax.experimental.colocated_python`: run a Python function (or a class's methods) on
the CPU devices colocated with its array arguments. JAX: jax.experimental.colocated_python.

mjax runs one process per program, so the CPU devices colocated with an array's devices
are this process's: the function runs here, on the arguments themselves, with JAX's
checks (jax.Array arguments and results, one device list, declared specs). Arrays on
another process's devices raise NotImplementedError (JAX ships the function to that
host's colocated Python runtime, which mjax does not have)."""
from mjax.experimental.colocated_python.api import (
    colocated_cpu_devices, colocated_python, colocated_python_class)

__all__ = ["colocated_cpu_devices", "colocated_python", "colocated_python_class"]
