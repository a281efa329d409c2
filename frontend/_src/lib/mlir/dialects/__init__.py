"""jax._src.lib.mlir.dialects: jaxlib's dialect bindings under JAX's private names
(`hlo` is StableHLO's)."""
from jaxlib.mlir.dialects import arith, chlo, func, stablehlo  # noqa: F401
from jaxlib.mlir.dialects import stablehlo as hlo  # noqa: F401
