"""jax._src.lib: its `mlir` bindings (jaxlib's), which lowering rules written for JAX
import from here, and `cuda_versions`, None as in a jaxlib without its CUDA plugin."""

cuda_versions = None
