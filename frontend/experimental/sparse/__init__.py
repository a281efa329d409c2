"""`mjax.experimental.sparse`: JAX's sparse arrays. BCOO (batch, sparse and dense
dimensions) with its ops, BCSR, the 2-d COO/CSR/CSC formats, `sparsify` (dense code on
sparse inputs), sparse-aware grad/jacobians, and constructors. Every op is a composition
of lax ops (gather, scatter-add, sort, dot_general), so jit, grad and vmap apply. vmap
maps a sparse array over its leading batch dimension (in_axes/out_axes 0 or None: mjax's
vmap maps pytree leaves, and the array's shape follows its leaves' rank). Ops JAX keeps
sparse by other means go through the dense form here (gather, conv_general_dilated,
multiply_sparse's right operand, layout changes to more batch/dense dimensions, while/cond
bodies under sparsify). Not built: lobpcg_standard and the primitives as primitives
(primitives.py). JAX: jax.experimental.sparse."""
from mjax.experimental.sparse import bcoo, bcsr, coo, csr, linalg, random, transform  # noqa
from mjax.experimental.sparse import ad, api, util  # noqa: F401
from mjax.experimental.sparse import bcoo_methods as _bcoo_methods  # noqa: F401 (operators)
from mjax.experimental.sparse import format_methods as _format_methods  # noqa: F401
from mjax.experimental.sparse._base import (CuSparseEfficiencyWarning, JAXSparse,
                                            SparseEfficiencyError, SparseEfficiencyWarning)
from mjax.experimental.sparse.ad import grad, jacfwd, jacobian, jacrev, value_and_grad
from mjax.experimental.sparse.api import empty, eye, random_bcoo, todense
from mjax.experimental.sparse.bcoo import (BCOO, bcoo_extract, bcoo_fromdense,
                                           bcoo_sort_indices, bcoo_sum_duplicates,
                                           bcoo_todense, bcoo_transpose, bcoo_update_layout)
from mjax.experimental.sparse.bcoo_ops import (bcoo_broadcast_in_dim, bcoo_concatenate,
                                               bcoo_conv_general_dilated, bcoo_dot_general,
                                               bcoo_dot_general_sampled, bcoo_dynamic_slice,
                                               bcoo_gather, bcoo_multiply_dense,
                                               bcoo_multiply_sparse, bcoo_reduce_sum,
                                               bcoo_reshape, bcoo_rev, bcoo_slice,
                                               bcoo_squeeze)
from mjax.experimental.sparse.bcsr import (BCSR, bcsr_broadcast_in_dim, bcsr_concatenate,
                                           bcsr_dot_general, bcsr_extract, bcsr_fromdense,
                                           bcsr_sum_duplicates, bcsr_todense)
from mjax.experimental.sparse.coo_csr import (COO, CSC, CSR, coo_fromdense, coo_matmat,
                                              coo_matvec, coo_todense, csr_fromdense,
                                              csr_matmat, csr_matvec, csr_todense)
from mjax.experimental.sparse.primitives import (  # noqa: F401
    SparseTracer, bcoo_dot_general_p, bcoo_dot_general_sampled_p, bcoo_extract_p,
    bcoo_fromdense_p, bcoo_sort_indices_p, bcoo_spdot_general_p, bcoo_sum_duplicates_p,
    bcoo_todense_p, bcoo_transpose_p, bcsr_dot_general_p, bcsr_extract_p, bcsr_fromdense_p,
    bcsr_todense_p, coo_fromdense_p, coo_matmat_p, coo_matvec_p, coo_todense_p,
    csr_fromdense_p, csr_matmat_p, csr_matvec_p, csr_todense_p, todense_p)
from mjax.experimental.sparse.transform import sparsify
