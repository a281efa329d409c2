"""JAX: jax.extend: access to the machinery under JAX's API, for extensions (primitives,
backends, MLIR bindings, PRNG implementations). No compatibility guarantee, as in JAX;
docs/api_coverage.md lists what mjax lacks."""
from mjax.extend import (backend, core, linear_util, mlir, random,  # noqa: F401
                         source_info_util)
