"""jax._src.cudnn: only `scaled_matmul_stablehlo` (JAX's nn_test imports its quantize)."""
