"""JAX-private: jax._src.dtypes (equinox, flax, haiku through flax): mjax.dtypes' names,
and ExtendedDType, the base class flax.linen's fp8 meta dtype derives from at import."""
import abc

import numpy as np

from mjax.dialect.types import KeyType
from mjax.specs.dtypes import *  # noqa: F401,F403
from mjax.specs.dtypes import TypePromotionError, float0, issubdtype, result_type  # noqa: F401


class ExtendedDType(abc.ABC):
    """The base class of dtypes beyond NumPy's (PRNG key types; a library's own, e.g.
    flax's fp8 meta dtype, a dataclass giving `type`, `name` and `_rules`). mjax computes
    only with its key types; a library's own extended dtype can be defined (so the library
    imports) but not used in arrays. JAX: jax._src.dtypes.ExtendedDType."""


ExtendedDType.register(KeyType)
DType = np.dtype   # (JAX's annotation alias)


def supports_inf(dtype) -> bool:
    """Whether the floating dtype has infinities (float8_e4m3fn has none). JAX:
    jax._src.dtypes.supports_inf."""
    return issubdtype(dtype, np.inexact) and bool(np.isinf(np.array(np.inf).astype(dtype)))
