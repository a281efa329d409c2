"""JAX: jax.extend.mlir.dialects: the MLIR dialect bindings that jaxlib ships (arith,
func, stablehlo, chlo, sdy, ...), one submodule each."""
