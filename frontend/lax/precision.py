"""The `precision` argument of contractions (dot_general, the jnp products, convolutions):
JAX's `Precision` enum, the dot algorithms (`DotAlgorithm`, `DotAlgorithmPreset`), the
canonical form JAX's functions reduce every accepted spelling to, and the form the
dialect keeps in an op's `precision` attribute.

In the dialect, `precision` is absent, a pair of "DEFAULT"/"HIGH"/"HIGHEST" (StableHLO's
precision config), or a dot algorithm (mjax.dialect.dot_algorithms)."""
from __future__ import annotations

import enum
from typing import Any, NamedTuple

import numpy as np

from mjax.config import config
from mjax.dialect import dot_algorithms


class Precision(enum.Enum):
    """How much precision float32 contractions keep on accelerators (no effect on CPU).
    JAX: lax.Precision; strings name its members ('highest', 'float32', ...)."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        return _PRECISION_STRINGS.get(value)

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


_PRECISION_STRINGS = {
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST,
    "high": Precision.HIGH, "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT, "bfloat16": Precision.DEFAULT, "fastest": Precision.DEFAULT,
    None: Precision.DEFAULT}


class DotAlgorithm(NamedTuple):
    """A dot product's algorithm: the types the operands are rounded to, the accumulation
    type, and how many components and operations emulate a higher precision. JAX:
    lax.DotAlgorithm."""
    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """The dot algorithms known to run on some platform, by name (`precision=
    'BF16_BF16_F32'` names one). JAX: lax.DotAlgorithmPreset. What each computes in:
    mjax.dialect.dot_algorithms."""
    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"DotAlgorithmPreset.{self.name}"

    def __str__(self) -> str:
        return self.name

    @property
    def supported_lhs_types(self):
        return dot_algorithms.supported_input_types(self.name)

    @property
    def supported_rhs_types(self):
        return dot_algorithms.supported_input_types(self.name)

    @property
    def accumulation_type(self):
        return dot_algorithms.accumulation_type(self.name)

    def supported_output_types(self, lhs_dtype, rhs_dtype):
        return dot_algorithms.supported_output_types(self.name, lhs_dtype, rhs_dtype)


PrecisionLike = Any
CanonicalPrecision = Any


def canonicalize_precision(precision: PrecisionLike) -> CanonicalPrecision:
    """None, a pair of Precisions, a DotAlgorithmPreset or a DotAlgorithm, from any
    spelling JAX accepts (None reads jax_default_matmul_precision). JAX:
    lax.canonicalize_precision."""
    if precision is None:
        default = config.read("jax_default_matmul_precision")
        if default is None:
            return None
        try:
            return canonicalize_precision(default)
        except ValueError:
            raise ValueError(f"jax_default_matmul_precision flag must be set to None, a "
                             f"value in {list(_PRECISION_STRINGS)}, or the name of a "
                             f"lax.DotAlgorithmPreset, but got {default}") from None
    if isinstance(precision, str):
        if precision in _PRECISION_STRINGS:
            return (Precision(precision),) * 2
        if precision in DotAlgorithmPreset.__members__:
            return DotAlgorithmPreset[precision]
    elif isinstance(precision, Precision):
        return (precision, precision)
    elif isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return precision
    elif isinstance(precision, (list, tuple)) and len(precision) == 2:
        if all(isinstance(p, Precision) for p in precision):
            return tuple(precision)
        if all(isinstance(p, str) for p in precision):
            pair = [canonicalize_precision(p) for p in precision]
            if all(isinstance(p, tuple) for p in pair):
                return (pair[0][0], pair[1][0])
    raise ValueError(
        "Precision argument must be one of:\n- None,\n"
        f"- a string in {list(_PRECISION_STRINGS)},\n- a lax.Precision value,\n"
        "- a tuple of two lax.Precision values or strings,\n"
        "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
        f"- a lax.DotAlgorithm value;\nbut got {precision}.")


def precision_attr(precision: PrecisionLike):
    """The dialect's form of `precision` (mjax.dialect.dot_algorithms.normalize)."""
    return dot_algorithms.normalize(canonicalize_precision(precision))


def precision_from_attr(value) -> CanonicalPrecision:
    """The JAX object of an op's `precision` attribute (what a jaxpr equation shows)."""
    if value is None:
        return None
    if isinstance(value, str):
        return DotAlgorithmPreset[value]
    value = tuple(value)
    if value and value[0] == "DotAlgorithm":
        return DotAlgorithm(*(np.dtype(t).type for t in value[1:4]), *value[4:])
    return tuple(Precision[p] for p in value)


__all__ = ["CanonicalPrecision", "DotAlgorithm", "DotAlgorithmPreset", "Precision",
           "PrecisionLike", "canonicalize_precision", "precision_attr",
           "precision_from_attr"]
