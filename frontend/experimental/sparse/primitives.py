"""The names of JAX's sparse primitives (`bcoo_dot_general_p`, ...) and `SparseTracer`.
mjax's sparse ops are compositions of lax ops, not primitives of their own, and sparsify
interprets a jaxpr instead of tracing with SparseTracer: these objects name the function
to call and raise NotImplementedError when used as primitives."""
from __future__ import annotations


class SparsePrimitiveName:
    """Stands for JAX's sparse primitive `name`; binding it raises NotImplementedError."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return self.name

    def bind(self, *args, **params):
        raise NotImplementedError(
            f"jax.experimental.sparse.{self.name}_p: mjax has no sparse primitives (its "
            f"sparse ops are built from lax ops); call jax.experimental.sparse.{self.name}")

    def def_impl(self, *args, **kwargs):
        self.bind()

    def_abstract_eval = def_impl


class SparseTracer:
    """JAX's tracer of sparsify; mjax's sparsify interprets a jaxpr instead."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("jax.experimental.sparse.SparseTracer: mjax's sparsify "
                                  "evaluates a jaxpr with BCOO values and has no tracer")


_NAMES = ("bcoo_dot_general", "bcoo_dot_general_sampled", "bcoo_extract", "bcoo_fromdense",
          "bcoo_sort_indices", "bcoo_spdot_general", "bcoo_sum_duplicates", "bcoo_todense",
          "bcoo_transpose", "bcsr_dot_general", "bcsr_extract", "bcsr_fromdense",
          "bcsr_todense", "coo_fromdense", "coo_matmat", "coo_matvec", "coo_todense",
          "csr_fromdense", "csr_matmat", "csr_matvec", "csr_todense", "todense")
PRIMITIVES = {f"{n}_p": SparsePrimitiveName(n) for n in _NAMES}
globals().update(PRIMITIVES)
