"""`mjax.experimental.pallas.tpu_sc` (`plsc`): the SparseCore names of JAX's Pallas.

mjax compiles Pallas kernels for TensorCores only, so this module holds just the names a
program needs to import it and describe SparseCore meshes; making one (or asking for the
chip's SparseCores) raises NotImplementedError. A program that imports the module and
runs its kernels on TensorCores works, as in JAX on a chip without SparseCores (a v5e).
The other names of JAX's module (SparseCore vector ops) are missing (docs/api_coverage.md).
JAX: jax.experimental.pallas.tpu_sc.
"""
from __future__ import annotations

_WHAT = "SparseCore kernels (mjax's Pallas compiles for TensorCores only)"


def get_sparse_core_info():
    """The chip's SparseCores. JAX: plsc.get_sparse_core_info; not supported."""
    raise NotImplementedError(f"plsc.get_sparse_core_info is not supported by mjax: {_WHAT}")


get_sparse_core_info.mjax_unsupported = _WHAT


class _SubcoreMesh:
    mjax_unsupported = _WHAT

    def __init__(self, **kwargs):
        raise NotImplementedError(f"plsc.{type(self).__name__} is not supported by mjax: "
                                  f"{_WHAT}")


class VectorSubcoreMesh(_SubcoreMesh):
    """A mesh of SparseCore vector subcores (core_axis_name, subcore_axis_name,
    num_cores, num_subcores). JAX: plsc.VectorSubcoreMesh; not supported."""


class ScalarSubcoreMesh(_SubcoreMesh):
    """A mesh of SparseCore scalar subcores (axis_name, num_cores).
    JAX: plsc.ScalarSubcoreMesh; not supported."""


__all__ = ["ScalarSubcoreMesh", "VectorSubcoreMesh", "get_sparse_core_info"]
