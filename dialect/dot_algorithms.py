"""Dot algorithms: what a dot_general's `precision` attribute may name besides a
precision pair, and what each algorithm computes in.

The attribute holds a preset's name ("BF16_BF16_F32", JAX's DotAlgorithmPreset) or an
explicit algorithm as the tuple ("DotAlgorithm", lhs type, rhs type, accumulation type,
lhs components, rhs components, primitive operations, imprecise accumulation), with
types by NumPy name. The lowering casts the operands to the algorithm's types, computes
in its accumulation type, gives StableHLO its `algorithm` attribute, and casts the
result to the op's type. The frontend's `lax.DotAlgorithmPreset` reads its properties
from here."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from mjax.dialect import attributes as A

_F8 = tuple(np.dtype(getattr(ml_dtypes, n)) for n in (
    "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu"))
_F16, _BF16 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)

PRESETS = ("DEFAULT", "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM",
           "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32",
           "BF16_BF16_BF16", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
           "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32",
           "F64_F64_F64")

# The presets XLA's CPU backend computes: it ignores the algorithm attribute, so others
# are refused when lowering for a CPU, as JAX refuses them.
CPU_PRESETS = frozenset({"DEFAULT", "F16_F16_F16", "F32_F32_F32", "F64_F64_F64",
                         "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6"})


def supported_input_types(preset: str):
    """The operand types a preset computes in (an operand of another type is cast to the
    first); None: any."""
    if preset == "DEFAULT" or preset.startswith("ANY_F8"):
        return None
    if preset.startswith("F16_"):
        return (_F16,)
    if preset in ("BF16_BF16_BF16", "BF16_BF16_F32"):
        return (_BF16, _F32)
    return (_F64,) if preset == "F64_F64_F64" else (_F32,)


def accumulation_type(preset: str):
    """The type a preset accumulates in; None: the result's."""
    if preset in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
        return None
    return {"F16_F16_F16": _F16, "BF16_BF16_BF16": _BF16, "F64_F64_F64": _F64}.get(
        preset, _F32)


def supported_output_types(preset: str, lhs_dtype, rhs_dtype):
    """The result types a preset can produce from operands of these types; None: any."""
    if preset in ("ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM"):
        return (_F32, _F16, _BF16) + tuple(np.dtype(getattr(ml_dtypes, n)) for n in (
            "float8_e4m3fn", "float8_e5m2", "float8_e5m2fnuz", "float8_e4m3fnuz",
            "float8_e4m3b11fnuz"))
    low = {"F16_F16_F32": _F16, "BF16_BF16_F32": _BF16}.get(preset)
    if low is not None:
        both = np.promote_types(lhs_dtype, rhs_dtype)
        return (_F32, low) if both == low else (_F32,)
    acc = accumulation_type(preset)
    return None if acc is None else (acc,)


def normalize(precision):
    """The attribute form of a precision given as JAX's objects (a pair of Precision
    members, a DotAlgorithmPreset, a DotAlgorithm) or already in attribute form."""
    if precision is None or isinstance(precision, str):
        return precision
    if hasattr(precision, "lhs_precision_type"):          # a DotAlgorithm
        v = tuple(precision)
        return ("DotAlgorithm",) + tuple(np.dtype(t).name for t in v[:3]) + tuple(
            int(c) for c in v[3:6]) + (bool(v[6]),)
    if isinstance(precision, (tuple, list)):
        if precision[:1] and precision[0] == "DotAlgorithm":
            return tuple(precision)
        return tuple(getattr(p, "name", p) for p in precision)
    return getattr(precision, "name", precision)          # a DotAlgorithmPreset


class PrecisionKind(A.AttrKind):
    """A contraction's `precision` attribute: absent, a precision pair or a dot
    algorithm, given in attribute form or as JAX's objects."""
    expected = "a precision pair or a dot algorithm"

    def normalize(self, value):
        return normalize(value)


_FIELDS = ("lhs_precision_type", "rhs_precision_type", "accumulation_type",
           "lhs_component_count", "rhs_component_count", "num_primitive_operations",
           "allow_imprecise_accumulation")     # (lax.DotAlgorithm's, in order)


def describe(precision) -> str:
    """An algorithm attribute as a user wrote it: a preset's name, or DotAlgorithm(...)."""
    if isinstance(precision, str):
        return precision
    return "DotAlgorithm(" + ", ".join(
        f"{f}={v}" for f, v in zip(_FIELDS, tuple(precision)[1:])) + ")"


def is_algorithm(precision) -> bool:
    """Whether a `precision` attribute value names an algorithm (not a precision pair)."""
    return isinstance(precision, str) or (
        precision is not None and tuple(precision)[:1] == ("DotAlgorithm",))


def check(precision, op: str = "dot_general") -> None:
    """Raises TypeError unless `precision` is a valid attribute value of `op`."""
    if precision is None:
        return
    if isinstance(precision, str):
        if precision not in PRESETS:
            raise TypeError(f"{op} precision names no dot algorithm preset: "
                            f"{precision!r}")
        return
    value = tuple(precision)
    if value[:1] == ("DotAlgorithm",):
        if len(value) != 8:
            raise TypeError(f"{op} precision: a DotAlgorithm has 7 fields, got "
                            f"{value[1:]!r}")
        return
    if len(value) != 2 or any(p not in ("DEFAULT", "HIGH", "HIGHEST") for p in value):
        raise TypeError(f"{op} precision must be absent, a pair of DEFAULT/HIGH/HIGHEST "
                        f"or a dot algorithm, got {precision!r}")


def compute_types(precision, lhs_dtype, rhs_dtype, out_dtype):
    """(lhs, rhs, accumulation) dtypes of a dot with algorithm `precision` (an
    attribute value) on operands of these types giving `out_dtype`."""
    if not isinstance(precision, str):
        return tuple(np.dtype(t) for t in tuple(precision)[1:4])

    def pick(dtype, supported):
        dtype = np.dtype(dtype)
        return dtype if supported is None or dtype in supported else supported[0]
    lhs = pick(lhs_dtype, supported_input_types(precision))
    rhs = pick(rhs_dtype, supported_input_types(precision))
    return lhs, rhs, pick(out_dtype, supported_output_types(precision, lhs, rhs))


def hlo_algorithm(precision, lhs_dtype, rhs_dtype):
    """(lhs type, rhs type, accumulation type, lhs components, rhs components, primitive
    operations, imprecise accumulation) of StableHLO's algorithm attribute, with
    types as dtypes or "tf32"; None for DEFAULT."""
    if not isinstance(precision, str):
        v = tuple(precision)
        return (np.dtype(v[1]), np.dtype(v[2]), np.dtype(v[3]), *v[4:])
    if precision == "DEFAULT":
        return None
    if precision.startswith("ANY_F8"):
        if np.dtype(lhs_dtype) not in _F8 or np.dtype(rhs_dtype) not in _F8:
            raise ValueError(f"The dot algorithm '{precision}' requires both inputs to "
                             f"have float8 dtypes. Got {np.dtype(lhs_dtype)} and "
                             f"{np.dtype(rhs_dtype)} instead.")
        return (np.dtype(lhs_dtype), np.dtype(rhs_dtype), _F32, 1, 1, 1,
                precision == "ANY_F8_ANY_F8_F32_FAST_ACCUM")
    parts = precision.split("_")
    ops = int(parts[3][1:]) if len(parts) == 4 else 1
    types = {"F16": _F16, "BF16": _BF16, "TF32": "tf32", "F32": _F32, "F64": _F64}
    return (types[parts[0]], types[parts[1]], types[parts[2]], 1, 1, ops, False)


__all__ = ["CPU_PRESETS", "PRESETS", "PrecisionKind", "accumulation_type", "check",
           "compute_types", "describe", "hlo_algorithm", "is_algorithm", "normalize",
           "supported_input_types", "supported_output_types"]
