"""JAX-private: jax._src.dtypes (equinox, flax): mjax.dtypes' names."""
from mjax.dtypes import *  # noqa: F401,F403
from mjax.dtypes import TypePromotionError, float0, issubdtype, result_type  # noqa: F401
