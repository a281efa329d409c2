"""Descriptions of TPU chips: `pltpu.ChipVersion`, `pltpu.TpuInfo`, `pltpu.get_tpu_info` and
`pltpu.get_tpu_info_for_chip`, with JAX 0.10.2's names, signatures and numbers.

A `TpuInfo` describes ONE TensorCore (multiply by `num_cores` for a logical device). The
numbers are hardware facts: vector/scalar memory per core, MXU shape and count, and a
chip's HBM size, memory bandwidth and peak op rates, the last divided among the chip's
physical TensorCores. `get_tpu_info()` reads the default device's `device_kind` (or the
abstract mesh's device, under `use_abstract_mesh`), maps it to a chip as JAX does
(`chip_version_from_device_kind`: 'TPU v5 lite' is a v5e) and raises JAX's ValueError for
a device that is not a TPU. JAX: jax._src.pallas.mosaic.tpu_info.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
from typing import Callable

from mjax.arrays.placement import default_device, devices
from mjax.specs import dtypes
from mjax.specs.sharding_impls import current_mesh, get_abstract_mesh

_KIB, _MIB = 1024, 1024 * 1024


class ChipVersion(enum.Enum):
    """TPU generations. JAX: pltpu.ChipVersion."""
    TPU_V2 = "v2"
    TPU_V3 = "v3"
    TPU_V4I = "v4i"
    TPU_V4 = "v4"
    TPU_V5E = "v5e"
    TPU_V5P = "v5p"
    TPU_V6E = "v6e"
    TPU_7 = "7"
    TPU_7X = "7x"
    TPU_8I = "8i"

    def __str__(self) -> str:
        return self.value

    @property
    def num_physical_tensor_cores_per_chip(self) -> int:
        """TensorCores on one chip: 1 on the lite chips, 2 on the others."""
        return 1 if self.is_lite else 2

    @property
    def supports_megacore(self) -> bool:
        """Whether the chip's two cores can act as one device (v4 and v5p)."""
        return self in (ChipVersion.TPU_V4, ChipVersion.TPU_V5P)

    @property
    def is_lite(self) -> bool:
        """The single-core inference chips: v4i, v5e, v6e."""
        return self in (ChipVersion.TPU_V4I, ChipVersion.TPU_V5E, ChipVersion.TPU_V6E)


# device_kind (as the TPU runtime names its devices) -> chip
_CHIP_OF_KIND = {
    "TPU v2": ChipVersion.TPU_V2, "TPU v3": ChipVersion.TPU_V3,
    "TPU v4": ChipVersion.TPU_V4, "TPU v4 lite": ChipVersion.TPU_V4I,
    "TPU v5e": ChipVersion.TPU_V5E, "TPU v5 lite": ChipVersion.TPU_V5E,
    "TPU v5": ChipVersion.TPU_V5P, "TPU v5p": ChipVersion.TPU_V5P,
    "TPU v6e": ChipVersion.TPU_V6E, "TPU v6 lite": ChipVersion.TPU_V6E,
    "TPU7": ChipVersion.TPU_7, "TPU7x": ChipVersion.TPU_7X, "TPU8i": ChipVersion.TPU_8I,
}


def chip_version_from_device_kind(device_kind: str) -> ChipVersion | None:
    """The chip a device of `device_kind` is, or None when it is no TPU JAX knows."""
    return _CHIP_OF_KIND.get(device_kind) if isinstance(device_kind, str) else None


@dataclasses.dataclass(frozen=True, kw_only=True)
class SparseCoreInfo:
    """A chip's SparseCores: cores, vector subcores per core, lanes, and the vector
    memory of each subcore. JAX: tpu_info.SparseCoreInfo."""
    num_cores: int
    num_subcores: int
    num_lanes: int
    vmem_capacity_bytes: int
    dma_granule_size_bytes: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class TpuInfo:
    """One TensorCore of a TPU chip (multiply by `num_cores` for the logical device).
    `num_mxus` is per core, `num_accumulators` the 32-bit (num_sublanes, mxu_column_size)
    accumulators of each MXU (0: not known). JAX: pltpu.TpuInfo."""
    chip_version: ChipVersion
    generation: int
    num_cores: int
    num_lanes: int
    num_sublanes: int
    mxu_column_size: int
    num_mxus: int
    num_accumulators: int
    vmem_capacity_bytes: int
    cmem_capacity_bytes: int
    smem_capacity_bytes: int
    hbm_capacity_bytes: int
    mem_bw_bytes_per_second: int
    bf16_ops_per_second: int
    int8_ops_per_second: int
    fp8_ops_per_second: int
    int4_ops_per_second: int
    sparse_core: SparseCoreInfo | None = None

    @property
    def is_lite(self) -> bool:
        return self.chip_version.is_lite

    @property
    def is_split_chip(self) -> bool:
        """A chip of several TensorCores used one core per device (not as a megacore)."""
        return self.num_cores == 1 and self.chip_version.num_physical_tensor_cores_per_chip > 1

    @property
    def is_megacore(self) -> bool:
        """Whether a device is several TensorCores acting as one."""
        return self.num_cores > 1

    def is_matmul_supported(self, lhs_dtype, rhs_dtype) -> bool:
        """Whether the MXU multiplies these operand dtypes as they are (no conversion)."""
        lhs, rhs = dtypes.dtype(lhs_dtype).name, dtypes.dtype(rhs_dtype).name
        both = lambda kinds: lhs in kinds and rhs in kinds   # noqa: E731
        gen = self.generation
        if gen in (2, 3):
            return lhs == rhs == "float32"
        if gen == 4:
            return lhs in ("float32", "bfloat16") and rhs in ("float32", "bfloat16", "int8")
        if gen in (5, 6):
            return (both(("float32", "bfloat16", "float8_e5m2", "float8_e4m3b11fnuz"))
                    or both(("int8", "uint8")) or both(("int4", "uint4")))
        if gen in (7, 8):
            fp8 = ("float8_e5m2", "float8_e4m3fn")
            return (both(("float32", "bfloat16"))
                    or (lhs in ("float32", "bfloat16") + fp8 and rhs in fp8))
        return False

    def get_sublane_tiling(self, dtype) -> int:
        """Rows of the second-minor tile XLA lays `dtype` out in (a heuristic: XLA flags
        change it). Before generation 7 only 8- and 4-bit types get the large tiling."""
        bits = dtypes.itemsize_bits(dtype)
        large = self.num_sublanes * (32 // bits)
        if self.generation < 7:
            return self.num_sublanes if bits in (16, 32) else large
        if self.generation == 7:
            return large
        raise NotImplementedError("TPU generation is not supported")


# chip -> (generation, MXUs per core, accumulators per MXU, VMEM MiB per core, SMEM bytes
# per core); then the chip's totals, which each physical core gets its share of:
# (CMEM bytes, HBM bytes, memory bytes/s, bf16/int8/fp8/int4 ops/s; 0: not available)
_V = ChipVersion
_PER_CORE = {
    _V.TPU_V2: (2, 1, 0, 16, 16 * _KIB), _V.TPU_V3: (3, 2, 0, 16, 16 * _KIB),
    _V.TPU_V4I: (4, 4, 0, 16, _MIB), _V.TPU_V4: (4, 4, 0, 16, _MIB),
    _V.TPU_V5E: (5, 4, 0, 128, _MIB), _V.TPU_V5P: (5, 4, 0, 64, _MIB),
    _V.TPU_V6E: (6, 2, 0, 128, _MIB), _V.TPU_7: (7, 2, 128, 64, _MIB),
    _V.TPU_7X: (7, 2, 128, 64, _MIB), _V.TPU_8I: (8, 2, 256, 192, _MIB),
}
_PER_CHIP = {
    _V.TPU_V2: (0, 16_000_000_000, 716 * 10**9, 46 * 10**12, 0, 0, 0),
    _V.TPU_V3: (0, 34_400_000_000, 825 * 10**9, 140 * 10**12, 0, 0, 0),
    _V.TPU_V4I: (134_000_000, 8_590_000_000, 614 * 10**9, 137 * 10**12, 0, 0, 0),
    _V.TPU_V4: (134_000_000, 34_400_000_000, 1_230 * 10**9, 275 * 10**12, 0, 0, 0),
    _V.TPU_V5E: (0, 17_200_000_000, 820 * 10**9, 197 * 10**12, 394 * 10**12, 0,
                 788 * 10**12),
    _V.TPU_V5P: (0, 103_000_000_000, 2_460 * 10**9, 459 * 10**12, 918 * 10**12, 0,
                 1_840 * 10**12),
    _V.TPU_V6E: (0, 34_400_000_000, 1_640 * 10**9, 920 * 10**12, 1_840 * 10**12,
                 920 * 10**12, 3_680 * 10**12),
    _V.TPU_7: (0, 206_000_000_000, 7_400 * 10**9, 2_310 * 10**12, 0, 4_600 * 10**12, 0),
    _V.TPU_7X: (0, 206_000_000_000, 7_400 * 10**9, 2_310 * 10**12, 0, 4_600 * 10**12, 0),
    _V.TPU_8I: (0, 309_000_000_000, 8_600 * 10**9, 1_101 * 10**12, 0, 8_808 * 10**12, 0),
}
# chip -> its SparseCores: (cores, subcores, lanes, VMEM bytes per subcore, DMA granule)
_SPARSE = {
    _V.TPU_V5P: (4, 16, 8, 512 * _KIB, 32), _V.TPU_V6E: (2, 16, 8, 256 * _KIB, 32),
    _V.TPU_7: (2, 16, 16, 512 * _KIB, 32), _V.TPU_7X: (2, 16, 16, 512 * _KIB, 32),
    _V.TPU_8I: (1, 4, 16, 512 * _KIB, 64),
}
_NO_MEGACORE_DUAL = (_V.TPU_V2, _V.TPU_V3, _V.TPU_7, _V.TPU_7X, _V.TPU_8I)
del _V

# device_kind -> a function returning its TpuInfo, for devices JAX's mapping does not know
# (JAX: tpu_info.registry); get_tpu_info consults it for any other device kind.
registry: dict[str, Callable[[], TpuInfo]] = {}


class Tiling(enum.Enum):
    """How a TPU memory buffer is tiled: COMPACT (TensorCore (8, 128) tiles; a
    pipeline's 1-D block buffers are flat) or SPARSE_CORE (tiles of 8; a pipeline keeps
    a 1-D block's buffer slots as rows). JAX: pltpu.Tiling."""
    COMPACT = enum.auto()
    SPARSE_CORE = enum.auto()

    @property
    def shape(self) -> tuple[int, ...]:
        return (8, 128) if self is Tiling.COMPACT else (8,)


def _info(chip_version: ChipVersion, num_cores: int) -> TpuInfo:
    if chip_version not in _PER_CORE:
        raise ValueError(f"Unsupported TPU chip version: {chip_version}")
    gen, mxus, accs, vmem_mib, smem = _PER_CORE[chip_version]
    share = chip_version.num_physical_tensor_cores_per_chip
    cmem, hbm, bw, bf16, int8, fp8, int4 = (v // share for v in _PER_CHIP[chip_version])
    sparse = _SPARSE.get(chip_version)
    return TpuInfo(
        chip_version=chip_version, generation=gen, num_cores=num_cores, num_lanes=128,
        num_sublanes=8, mxu_column_size=256 if gen >= 6 else 128, num_mxus=mxus,
        num_accumulators=accs, vmem_capacity_bytes=vmem_mib * _MIB, cmem_capacity_bytes=cmem,
        smem_capacity_bytes=smem, hbm_capacity_bytes=hbm, mem_bw_bytes_per_second=bw,
        bf16_ops_per_second=bf16, int8_ops_per_second=int8, fp8_ops_per_second=fp8,
        int4_ops_per_second=int4,
        sparse_core=None if sparse is None else SparseCoreInfo(
            num_cores=sparse[0], num_subcores=sparse[1], num_lanes=sparse[2],
            vmem_capacity_bytes=sparse[3], dma_granule_size_bytes=sparse[4]))


@functools.lru_cache(maxsize=None)
def get_tpu_info_for_chip(chip_version: ChipVersion,
                          num_tensor_cores_per_logical_device: int) -> TpuInfo:
    """One TensorCore of `chip_version` in a configuration of
    `num_tensor_cores_per_logical_device` cores per device: 1 on the lite chips and on
    the two-core chips without megacore (v2, v3, 7, 7x, 8i); 1 (split) or 2 (megacore) on
    v4 and v5p. JAX: pltpu.get_tpu_info_for_chip."""
    n = num_tensor_cores_per_logical_device
    if (chip_version.is_lite or chip_version in _NO_MEGACORE_DUAL) and n != 1:
        raise ValueError("Lite chips and dual-core chips that do not support Megacore must "
                         f"have num_tensor_cores_per_logical_device=1, but got {n}.")
    return _info(chip_version, n)


def _default_device():
    return default_device() or devices()[0]


def device_kind_and_cores() -> tuple[str, int | None]:
    """The kind and TensorCore count of the device kernels are compiled for: the
    abstract mesh's device (under use_abstract_mesh or a mesh), else the default
    device. (mjax's abstract device of a concrete mesh carries no core count: a TPU
    mesh's first device tells it, as it does JAX's.)"""
    abstract = get_abstract_mesh().abstract_device
    if abstract is not None:
        cores, mesh = abstract.num_cores, current_mesh()
        if (cores is None and chip_version_from_device_kind(abstract.device_kind) is not None
                and mesh is not None
                and abstract == mesh.abstract_mesh.abstract_device):
            cores = getattr(mesh.devices.flat[0], "num_cores", None)
        return abstract.device_kind, cores
    device = _default_device()
    return device.device_kind, getattr(device, "num_cores", None)


def get_tpu_info() -> TpuInfo:
    """One TensorCore of the current device's chip (see device_kind_and_cores); a
    device that is no TPU raises ValueError, as in JAX. JAX: pltpu.get_tpu_info."""
    kind, cores = device_kind_and_cores()
    chip = chip_version_from_device_kind(kind)
    if chip is not None:
        return _info(chip, cores)
    if kind in registry:
        return registry[kind]()
    raise ValueError(f"Unsupported TPU device kind: {kind}")


def is_tpu_device() -> bool:
    """Whether the current device is a TPU chip JAX knows. JAX: pltpu.is_tpu_device."""
    try:
        kind, _ = device_kind_and_cores()
    except Exception:   # (no backend at all)
        return False
    return chip_version_from_device_kind(kind) is not None


__all__ = ["ChipVersion", "SparseCoreInfo", "Tiling", "TpuInfo", "chip_version_from_device_kind",
           "get_tpu_info", "get_tpu_info_for_chip", "is_tpu_device", "registry"]
