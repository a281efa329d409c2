"""JAX's module jax.experimental.sparse.coo: the COO format (see coo_csr)."""
from mjax.experimental.sparse.coo_csr import (COO, coo_fromdense, coo_matmat,  # noqa: F401
                                              coo_matvec, coo_todense)
