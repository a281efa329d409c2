"""mjax: JAX's programming model as an MLIR-dialect compiler toolkit."""
