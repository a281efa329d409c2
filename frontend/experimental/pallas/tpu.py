"""`mjax.experimental.pallas.tpu` (`pltpu`): the TPU memory spaces kernels name their
scratch buffers with. mjax runs such kernels in interpret mode, where every space is
ordinary device memory. JAX: pallas/mosaic (the TPU backend's public names)."""
from __future__ import annotations

import enum

from mjax import dtypes
from mjax.experimental.pallas.core import CompilerParams, MemoryRef


class MemorySpace(enum.Enum):
    """TPU memory spaces; calling one gives a scratch buffer spec. JAX: pltpu.MemorySpace."""
    ANY = "any"
    VMEM = "vmem"
    SMEM = "smem"
    SEMAPHORE = "semaphore_mem"
    HBM = "hbm"

    def __call__(self, shape, dtype):
        return MemoryRef(tuple(shape), dtypes.canonicalize_dtype(dtype), self)

    def __str__(self):
        return self.value


ANY = MemorySpace.ANY
VMEM = MemorySpace.VMEM
SMEM = MemorySpace.SMEM
HBM = MemorySpace.HBM

TPUMemorySpace = MemorySpace

__all__ = ["ANY", "CompilerParams", "HBM", "MemorySpace", "SMEM", "TPUMemorySpace", "VMEM"]
