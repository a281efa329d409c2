"""Triton lowering of `jaxpr.debug_print` (pl.debug_print, jax.debug.print in a kernel),
as JAX's Triton lowering prints: one `tt.print` of the values after the format's text
(padded with a space each side; no placeholders), each value flagged signed when it is a
signed integer. Ordered prints, keyword arguments and placeholders are refused with
JAX's errors at the print's line. JAX: pallas/triton/lowering.py (its debug_print rule).
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.triton import dialect as tt

from mjax.dialect.ops import pallas_tpu as PT
from mjax.passes.kernel_lowering.prints import PrintValueError, check_print, print_error
from mjax.passes.rules.tables import TRITON
from mjax.passes.triton.types import avals_in


@TRITON.register(PT.DebugPrintOp)
def _debug_print(kl, op, *args, fmt, ordered, has_placeholders, keywords, **params):
    check_print(kl, op, ordered, False)
    if has_placeholders:
        raise print_error(PrintValueError, kl, op, "pl.debug_print() does not support "
                          "placeholders when lowering to Triton")
    check_print(kl, op, False, keywords)
    signed = [np.dtype(a.dtype).kind == "i" for a in avals_in(op)]
    tt.print_(f" {fmt} ", hex=False, args=list(args),
              is_signed=ir.DenseI32ArrayAttr.get([int(s) for s in signed]))
    return []
