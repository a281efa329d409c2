"""Attributes of the `stablehlo.custom_call` that runs a lowered kernel, as both Pallas
lowerings (Mosaic's `tpu_custom_call`, Triton's `__gpu$xla.gpu.triton`) set them."""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo


def row_major_layouts(types) -> ir.Attribute:
    """Row-major layouts (minor-to-major dims) of tensor types, as a kernel's windows and
    pointer math assume."""
    return ir.ArrayAttr.get([ir.DenseIntElementsAttr.get(
        np.arange(ir.RankedTensorType(t).rank - 1, -1, -1, dtype=np.int64),
        type=ir.IndexType.get()) for t in types])


def output_operand_aliases(pairs, n_results: int, first_operand: int = 0) -> ir.Attribute:
    """`output_operand_aliases` of pallas_call's `input_output_aliases` (flat (input,
    output) pairs); input i is operand `first_operand + i` of the custom call."""
    pairs = list(pairs)
    return ir.ArrayAttr.get([
        hlo.OutputOperandAlias.get(output_tuple_indices=[o] if n_results > 1 else [],
                                   operand_index=i + first_operand, operand_tuple_indices=[])
        for i, o in zip(pairs[0::2], pairs[1::2])])


__all__ = ["output_operand_aliases", "row_major_layouts"]
