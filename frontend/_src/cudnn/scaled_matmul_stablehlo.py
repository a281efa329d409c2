"""jax._src.cudnn.scaled_matmul_stablehlo: the block quantization mjax.nn's
scaled_dot_general uses (`quantize(x, config)` -> (x_q, scales), per block of
config.block_size along the last axis), and BlockScaleConfig."""
from mjax.nn.block_scaled import BlockScaleConfig, _quantize as quantize  # noqa: F401
