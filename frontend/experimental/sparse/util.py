"""JAX's module jax.experimental.sparse.util: helpers shared by the formats."""
from mjax.experimental.sparse._base import (CuSparseEfficiencyWarning,  # noqa: F401
                                            SparseEfficiencyError, SparseEfficiencyWarning,
                                            batched, is_traced)
