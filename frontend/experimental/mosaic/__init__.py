"""JAX: jax.experimental.mosaic: hand-written Mosaic TPU kernels.

`as_tpu_kernel(module, out_type, ...)` turns a Mosaic module (an `ir.Module` built with
jaxlib's `tpu`, `func`, `arith`, `vector`, `memref` ... dialects, `jaxlib.mosaic.python.tpu`,
or its text) into a jitted function that binds one `jaxpr.tpu_custom_call`
(dialect/ops/mosaic.py). Lowered for a TPU, `--jaxpr-pallas-to-mosaic` makes it the
`stablehlo.custom_call @tpu_custom_call` JAX emits (the module through jaxlib's
`mosaic-serde`, as bytecode, base64'd into the backend_config with JAX's fields:
passes/mosaic/tpu_kernel.py). On any other platform, compiling it raises JAX's
NotImplementedError. As in JAX, the module is checked (and serialized once) when the
kernel is made: a module that does not verify, or parameters it cannot take
(`collective_id` without a custom barrier, SparseCore `tiling` for a TensorCore kernel),
raise there.

`lowered_as_tpu_kernel` (a module already through Mosaic's own passes) and
`lower_module_to_custom_call` (JAX's lowering-rule API) are not provided.
"""
from __future__ import annotations

import collections.abc
import enum
import json
import re
from typing import Any, Callable, Sequence

from mjax.config import config as _config
from mjax.dialect.context import context
from mjax.dialect.ops.mosaic import TpuCustomCallOp
from mjax.dialect.types import ShapedArray
from mjax.jit.jitted import jit
from mjax.passes.mosaic.custom_call import MEMORY_SPACE_COLORS, serialize
from mjax.passes.mosaic.tpu_kernel import kernel_facts, kernel_module
from mjax.specs import dtypes as _dtypes
from mjax.tracing.core import bind

__all__ = ["Tiling", "TpuMemorySpace", "TpuSideEffectType", "as_tpu_kernel"]


class TpuMemorySpace(enum.Enum):
    """JAX: tpu_custom_call.MemorySpace (output/input_memory_spaces' values)."""
    HBM = enum.auto()
    VMEM = enum.auto()
    SEMAPHORE_MEM = enum.auto()
    SMEM = enum.auto()
    HOST = enum.auto()
    SC_SCALAR_SEMAPHORE_MEM = enum.auto()

    @property
    def color(self) -> int:
        """XLA's memory-space color of this space."""
        return MEMORY_SPACE_COLORS[self.name.lower()]


class TpuSideEffectType(enum.Enum):
    """What the kernel does besides its results: PURE (may be merged or removed),
    DATAFLOW_SIDE_EFFECTING (may be removed when unused, never merged),
    SIDE_EFFECTING (never merged nor removed)."""
    PURE = "pure"
    DATAFLOW_SIDE_EFFECTING = "dataflow_side_effecting"
    SIDE_EFFECTING = "side_effecting"


class Tiling(enum.Enum):
    """The memory tiling of a SparseCore kernel's operands."""
    COMPACT = "TILING_COMPACT"
    SPARSE_CORE = "TILING_SPARSE_CORE"


def _effects(value) -> str:
    if isinstance(value, TpuSideEffectType):
        return value.value
    if isinstance(value, bool):         # (as JAX's lower_module_to_custom_call reads one)
        return "side_effecting" if value else "pure"
    if isinstance(value, str) and value in {e.value for e in TpuSideEffectType}:
        return value
    raise TypeError(f"has_side_effects must be a TpuSideEffectType, got {value!r}")


def _spaces(spaces, what: str):
    if spaces is None:
        return None
    out = []
    for s in spaces:
        if s is not None and not isinstance(s, TpuMemorySpace):
            raise TypeError(f"{what} must hold TpuMemorySpace values or None, got {s!r}")
        out.append("" if s is None else s.name.lower())
    return tuple(out)


def _flags(flags):
    if flags is None:
        return None
    out = []
    for name, v in dict(flags).items():
        if isinstance(v, bool):
            out.append((str(name), bool(v)))
        elif isinstance(v, int):
            out.append((str(name), int(v)))
        elif isinstance(v, float):
            out.append((str(name), float(v)))
        else:
            raise ValueError("invalid flag value: " + str(v))
    return tuple(out)


def _out_avals(out_type) -> tuple[tuple[ShapedArray, ...], bool]:
    unpack = not isinstance(out_type, collections.abc.Iterable)
    types = (out_type,) if unpack else tuple(out_type)
    avals = []
    for t in types:
        if not (hasattr(t, "shape") and hasattr(t, "dtype")):
            raise TypeError(f"as_tpu_kernel's out_type must be a ShapeDtypeStruct (or a "
                            f"tuple of them), got {t!r}")
        avals.append(ShapedArray(tuple(int(d) for d in t.shape), _dtypes.dtype(t.dtype)))
    return tuple(avals), unpack


def _module_text(module, given) -> str:
    """The module's text, with the locations of a module built in Python (a module
    given as text has only its lines there, "-")."""
    if not isinstance(given, str):
        text = module.operation.get_asm(enable_debug_info=True)
        if re.search(r'loc\((callsite|fused|"(?!-"))', text):
            return text
    return module.operation.get_asm(enable_debug_info=False)


def as_tpu_kernel(
    module,
    out_type: Any,
    *,
    cost_estimate=None,
    kernel_name: str | None = None,
    vmem_limit_bytes: int | None = None,
    flags: dict[str, bool | int | float] | None = None,
    allow_input_fusion: Sequence[bool] | None = None,
    input_output_aliases: tuple[tuple[int, int], ...] = (),
    internal_scratch_in_bytes: int | None = None,
    collective_id: int | None = None,
    has_side_effects: TpuSideEffectType = TpuSideEffectType.PURE,
    serialization_format: int | None = 1,
    output_memory_spaces: tuple[TpuMemorySpace | None, ...] | None = None,
    disable_bounds_checks: bool = False,
    disable_semaphore_checks: bool = False,
    input_memory_spaces: tuple[TpuMemorySpace | None, ...] | None = None,
    shape_invariant_numerics: bool = False,
    needs_layout_passes: bool | None = None,
    metadata: Any | None = None,
    tiling: Tiling | None = None,
    _ir_version: int | None = None,
) -> Callable[..., Any]:
    """Turns the Mosaic kernel `module` into a function of arrays returning arrays of
    `out_type` (a ShapeDtypeStruct, or a tuple of them for several results), run as a
    `tpu_custom_call` on a TPU. JAX: jax.experimental.mosaic.as_tpu_kernel."""
    with context():
        kmod = kernel_module(module)
        kernel_facts(kmod, collective_id=collective_id, vmem_limit_bytes=vmem_limit_bytes,
                     tiling=None if tiling is None else tiling.value)
        serialize(kmod, int(_ir_version or 0))      # (mosaic-serde's errors, now, as JAX's)
        text = _module_text(kmod, module)
    out_avals, unpack = _out_avals(out_type)
    aliases = tuple(int(x) for pair in input_output_aliases for x in pair)
    params = dict(
        module=text,
        result_shapes=tuple(a.shape for a in out_avals) or None,
        result_dtypes=tuple(a.dtype for a in out_avals) or None,
        kernel_name=kernel_name,
        cost_estimate=None if cost_estimate is None else {
            str(k): int(v) for k, v in dict(cost_estimate).items()},
        vmem_limit_bytes=vmem_limit_bytes,
        flags=_flags(flags),
        allow_input_fusion=None if allow_input_fusion is None else tuple(
            bool(x) for x in allow_input_fusion),
        input_output_aliases=aliases or None,
        internal_scratch_in_bytes=internal_scratch_in_bytes,
        collective_id=collective_id,
        has_side_effects=_effects(has_side_effects),
        serialization_format=serialization_format,
        output_memory_spaces=_spaces(output_memory_spaces, "output_memory_spaces"),
        input_memory_spaces=_spaces(input_memory_spaces, "input_memory_spaces"),
        disable_bounds_checks=disable_bounds_checks or None,
        disable_semaphore_checks=disable_semaphore_checks or None,
        shape_invariant_numerics=shape_invariant_numerics or None,
        needs_layout_passes=needs_layout_passes,
        needs_hlo_passes=_config.read("jax_mosaic_allow_hlo") or None,
        kernel_metadata=None if metadata is None else json.dumps(
            dict(metadata), sort_keys=True, indent=0, separators=(",", ":")),
        tiling=None if tiling is None else tiling.value,
        ir_version=_ir_version,
    )
    if params["has_side_effects"] == "pure":
        params["has_side_effects"] = None       # (the default: left out of the IR)

    def apply_kernel(*args):
        outs = bind(TpuCustomCallOp, *args, **params)
        if not isinstance(outs, (list, tuple)):
            outs = (outs,)
        return outs[0] if unpack else tuple(outs)

    return jit(apply_kernel)
