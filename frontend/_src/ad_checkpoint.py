"""jax._src.ad_checkpoint (JAX's nn_test and api_test read saved_residuals from here):
mjax.ad_checkpoint's functions."""
from mjax.ad_checkpoint import (  # noqa: F401
    checkpoint, checkpoint_name, checkpoint_policies, print_saved_residuals, remat,
    saved_residuals)
