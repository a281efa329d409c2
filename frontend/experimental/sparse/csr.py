"""JAX's module jax.experimental.sparse.csr: the CSR and CSC formats (see coo_csr)."""
from mjax.experimental.sparse.coo_csr import (CSC, CSR, csr_fromdense, csr_matmat,  # noqa: F401
                                              csr_matvec, csr_todense)
