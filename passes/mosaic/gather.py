"""Mosaic lowering of gathers of values in Pallas TPU kernels: the take_along_axis form
only (`tpu.dynamic_gather`), as JAX 0.10.2's rule; JAX's errors for the others.

    %i = "jaxpr.reshape"(%idx) : tensor<8x128xi32> -> tensor<8x128x1xi32>
    %y = "jaxpr.gather"(%x, %i) {collapsed_slice_dims = [1], operand_batching_dims = [0],
                                 slice_sizes = [1, 1], mode = fill, ...}
  ==>
    %i = vector.shape_cast %idx : vector<8x128xi32> to vector<8x128x1xi32>
    %j = vector.shape_cast %i : vector<8x128x1xi32> to vector<8x128xi32>
    %y = tpu.dynamic_gather %x[%j] in [1] : vector<8x128xi32>, vector<8x128xi32> -> ...

The gather's mode picks no code: out-of-range indices are the chip's to answer, whatever
the mode ("fill" or "promise_in_bounds"; jnp.take_along_axis wraps negative ones
before the gather). "clip" is refused, as JAX refuses it.
"""
from __future__ import annotations

from jaxlib.mlir.dialects import vector
from jaxlib.mosaic.python import tpu

from mjax.dialect.ops import indexing as I
from mjax.passes.mosaic.kernel import core_type
from mjax.passes.mosaic.table import MOSAIC
from mjax.passes.mosaic.types import MosaicLoweringError, aval_out, avals_in, vtype


@MOSAIC.register(I.GatherOp)
def _gather(kl, op, x, indices, *, dimension_numbers, slice_sizes, mode, **params):
    a, i = avals_in(op)
    out = aval_out(op)
    rank = len(out.shape)
    if (len(a.shape) != rank or tuple(i.shape[:-1]) != tuple(out.shape)
            or i.shape[-1] != 1):
        raise MosaicLoweringError("Only take_along_axis-like gathers supported "
                                  f"(JAX's refusal: an operand {tuple(a.shape)} gathered "
                                  f"by indices {tuple(i.shape)} into {tuple(out.shape)})")
    # (the indices' trailing unit dim dropped: JAX's shape_cast, folded on the chip)
    idx = vector.shape_cast(vtype(out.shape, i.dtype), kl.value(indices, i.dtype))
    dn = dimension_numbers
    collapsed = tuple(dn["collapsed_slice_dims"])
    if (tuple(slice_sizes) == (1,) * rank and mode in ("fill", "promise_in_bounds")
            and not dn["offset_dims"] and collapsed == tuple(dn["start_index_map"])
            and tuple(dn["operand_batching_dims"]) == tuple(dn["start_indices_batching_dims"])
            and len(collapsed) == 1 and len(dn["operand_batching_dims"]) == rank - 1):
        (axis,) = collapsed
        if axis < rank - 2 and core_type({"compiler_params": kl.compiler_params}) == "tc":
            raise MosaicLoweringError(
                "Only gathers along the two minormost dimensions supported on TC "
                f"(JAX's refusal: axis {axis} of {tuple(a.shape)})")
        return [tpu.dynamic_gather(kl.value(x, a.dtype), idx, [int(axis)])]
    raise MosaicLoweringError(f"Unsupported gather (JAX's refusal: mode {mode!r}, "
                              f"dimension numbers {dict(dn)}, slice sizes "
                              f"{tuple(slice_sizes)})")
