"""Typed-FFI custom calls on batches of matrices: LAPACK on a CPU, cuSOLVER/hipSOLVER on a
GPU, laid out and configured as jaxlib's handlers expect.

    lapack_call("getrf", [a], avals)   ->  stablehlo.custom_call @lapack_sgetrf_ffi(%a)
    solver_call("getrf", [a], avals)   ->  stablehlo.custom_call @cusolver_getrf_ffi(%a)

LAPACK's handlers are typed by name (`lapack_<s|d|c|z><routine>_ffi`) and take options as
single characters; the GPU solvers have one handler per routine for every dtype and take
typed options (booleans, small integers). Both read column-major matrices with the leading
axes as a batch. jaxpr-to-stablehlo's `platform` option (cuda, rocm) says which applies
(`gpu_solver_prefix`); the GPU client registers the solver kernels (runtime/gpu_plugin.py).
"""
from __future__ import annotations

import functools

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.dtype_rules import is_complex
from mjax.dialect.types import aval_of
from mjax.passes.rules import hlo as H
from mjax.passes.rules.tables import platform_rules


@functools.cache
def _register_lapack() -> None:
    """Registers jaxlib's LAPACK FFI handlers with XLA's CPU custom-call registry (once
    per process; jax does the same when jax._src.lax.linalg is imported)."""
    from jaxlib import xla_client
    from jaxlib.cpu import _lapack
    _lapack.initialize()
    for name, fn in _lapack.registrations().items():
        if name.endswith("_ffi"):
            xla_client.register_custom_call_target(name, fn, "cpu", 1)


_LAPACK_PREFIX = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def lapack_target(routine: str, dtype) -> str:
    """`lapack_sgetrf_ffi` for ('getrf', float32). LAPACK has no half floats: for those
    (and any other type) JAX's CPU lowering error, NotImplementedError((KeyError(type),
    'Unsupported dtype name.'))."""
    dt = np.dtype(dtype)
    if dt.name not in _LAPACK_PREFIX:
        raise NotImplementedError(KeyError(dt.type), f"Unsupported dtype {dt.name}.")
    return f"lapack_{_LAPACK_PREFIX[dt.name]}{routine}_ffi"


def _layout(rank: int, column_major: bool) -> ir.Attribute:
    # Minor-to-major: matrices in Fortran order (rows fastest), batch axes outermost.
    dims = ((rank - 2, rank - 1) + tuple(range(rank - 3, -1, -1)) if column_major
            else tuple(range(rank - 1, -1, -1)))
    return ir.DenseIntElementsAttr.get(np.asarray(dims, np.int64), type=ir.IndexType.get())


def uint8(v: int) -> ir.Attribute:
    """A ui8 option (LAPACK's modes, the GPU solvers' algorithm numbers)."""
    return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), int(v))


def _u8(c: str) -> ir.Attribute:
    return uint8(ord(c))


def lapack_call(routine: str, operands, out_avals, config=None, aliases=None, target=None):
    """One LAPACK FFI custom call, laid out as jaxlib's handlers expect; returns results.

    `config`: routine options (single characters such as uplo='L', or MLIR attributes),
    `aliases`: {operand index: result index} for results LAPACK writes in place;
    `target`: a jaxlib handler named otherwise than lapack_<type><routine>_ffi."""
    _register_lapack()
    target = target or lapack_target(routine, aval_of(operands[0].type).dtype)
    return ffi_call(target, operands, out_avals, config, aliases)


def gpu_solver_prefix() -> str | None:
    """'cu' or 'hip' when lowering for a CUDA or ROCm GPU (jaxpr-to-stablehlo's `platform`
    option), where linalg calls jaxlib's cuSOLVER/hipSOLVER kernels; None elsewhere."""
    return platform_rules().solver_prefix


def tpu_linalg_here() -> bool:
    """Whether the program is lowered for a TPU (jaxpr-to-stablehlo's `platform=tpu`),
    where linalg lowers as JAX's TPU rules do: to the custom calls XLA's TPU compiler
    implements (LuDecomposition, Qr, ProductOfElementaryHouseholderReflectors, Eigh) and
    StableHLO's own cholesky and triangular_solve; LAPACK's kernels do not run there."""
    return platform_rules().tpu_linalg


def partial_subset(subset_by_index, n: int) -> bool:
    """Whether eigh's or svd's `subset_by_index` asks for less than all `n` values."""
    return subset_by_index is not None and tuple(subset_by_index) != (0, n)


def not_on_tpu(primitive: str) -> NotImplementedError:
    """The error JAX raises when lowering `primitive` for a TPU, where it has no rule."""
    return NotImplementedError(f"MLIR translation rule for primitive '{primitive}' not "
                               f"found for platform tpu")


def xla_custom_call(target: str, operands, out_avals, backend_config: str = "",
                    api_version: int = 1) -> list:
    """A custom call XLA implements itself (the TPU's linear algebra), laid out as JAX's
    mlir.custom_call writes it: no layouts, no typed-FFI options; batch axes in front."""
    attrs = {
        "call_target_name": ir.StringAttr.get(target),
        "has_side_effect": ir.BoolAttr.get(False),
        "backend_config": ir.StringAttr.get(backend_config),
        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), api_version),
        "called_computations": ir.ArrayAttr.get([]),
    }
    op = hlo.CustomCallOp.build_generic(
        results=[H.ttype(a.shape, a.dtype) for a in out_avals], operands=list(operands),
        attributes=attrs)
    return list(op.results)


def solver_call(routine: str, operands, out_avals, config=None, aliases=None,
                column_major=True):
    """One GPU solver FFI custom call (`cusolver_<routine>_ffi`: one handler for every
    dtype, options as typed attributes), laid out as lapack_call's."""
    return ffi_call(f"{gpu_solver_prefix()}solver_{routine}_ffi", operands, out_avals,
                    config, aliases, column_major)


def ffi_call(target: str, operands, out_avals, config=None, aliases=None,
             column_major=True):
    """A typed-FFI custom call on batches of matrices: the operands and results of the
    highest rank laid out column-major when `column_major` (row-major otherwise, and for
    lower ranks), the leading axes as batch axes."""
    in_avals = [aval_of(v.type) for v in operands]
    rank = max(a.ndim for a in in_avals)
    aliases = aliases or {}

    def layouts(avals):
        return ir.ArrayAttr.get([_layout(a.ndim, column_major and a.ndim == rank)
                                 for a in avals])
    attrs = {
        "call_target_name": ir.StringAttr.get(target),
        "has_side_effect": ir.BoolAttr.get(False),
        "backend_config": ir.StringAttr.get(""),
        # api_version 1 + a dictionary mhlo.backend_config is how XLA takes typed FFI
        # options from StableHLO (JAX: mlir.custom_call).
        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
        "called_computations": ir.ArrayAttr.get([]),
        "operand_layouts": layouts(in_avals),
        "result_layouts": layouts(out_avals),
        "output_operand_aliases": ir.ArrayAttr.get([
            hlo.OutputOperandAlias.get([o] if len(out_avals) > 1 else [], i, [])
            for i, o in aliases.items()]),
    }
    op = hlo.CustomCallOp.build_generic(
        results=[H.ttype(a.shape, a.dtype) for a in out_avals], operands=list(operands),
        attributes=attrs)
    op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get(
        {k: v if isinstance(v, ir.Attribute) else _u8(v) for k, v in (config or {}).items()})
    op.operation.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get(
        {"num_batch_dims": ir.StringAttr.get(str(rank - 2))})
    return list(op.results)


# ==== reading results =================================================================
def info_ok(info: ir.Value, direction: str = "EQ") -> ir.Value:
    return H.compare(info, H.constant_like(info, 0), direction)


def nan_unless(ok: ir.Value, x: ir.Value) -> ir.Value:
    """x where the batch's LAPACK call succeeded (`ok`, batch-shaped), NaN elsewhere."""
    aval = aval_of(x.type)
    nb = aval_of(ok.type).ndim
    okb = hlo.broadcast_in_dim(H.ttype(aval.shape, np.bool_), ok, list(range(nb)))
    nan = complex(np.nan, np.nan) if is_complex(aval.dtype) else np.nan
    return hlo.select(okb, x, H.constant(nan, aval.dtype, aval.shape))


def slice_matrix(x: ir.Value, limits) -> ir.Value:
    """x[..., :limits[-2], :limits[-1]] (None keeps an axis whole)."""
    shape = aval_of(x.type).shape
    hi = list(shape[:-2]) + [s if l is None else l for s, l in zip(shape[-2:], limits)]
    if tuple(hi) == shape:
        return x
    return hlo.slice(x, [0] * len(shape), hi, [1] * len(shape))


def conj(x):
    return hlo.complex(hlo.real(x), hlo.negate(hlo.imag(x)))
