"""Mosaic lowering of `jaxpr.debug_print` (pl.debug_print, jax.debug.print in a kernel),
as JAX's TPU lowering prints, with its errors at the print's line:

- all scalars: `tpu.log` of the format and the values; with placeholders (`{}` only,
  every value a 32-bit integer) the format's `{}`s become `$0`, `$1`, ... and the log is
  `formatted`, without them the values follow the text;
- one vector: stored into a VMEM buffer of its shape (in a `tpu.region`), which
  `tpu.log_buffer` prints after the format's text (the format must end in `{}`).

Ordered prints and keyword arguments are refused, as JAX refuses them.
JAX: pallas/mosaic/lowering.py (_debug_print_rule), pallas/primitives.py
(check_debug_print_format).
"""
from __future__ import annotations

import string

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import memref, vector
from jaxlib.mosaic.python import tpu

from mjax.dialect.ops import pallas_tpu as PT
from mjax.passes.mosaic.table import MOSAIC
from mjax.passes.kernel_lowering.prints import (PrintTypeError, PrintValueError, aval_text,
                                               check_print, print_error)
from mjax.passes.mosaic.types import avals_in, index, ref_type

def check_format(kl, op, fmt: str, n_args: int) -> None:
    """A placeholder format's checks (JAX: pl's check_debug_print_format)."""
    n = 0
    for _, field, spec, conversion in string.Formatter().parse(fmt):
        n += field is not None
        if spec or conversion:
            raise print_error(PrintValueError, kl, op, "The format string should not "
                              "contain any format specs or conversions")
        if field:
            raise print_error(PrintValueError, kl, op, "The format string should not "
                              "reference arguments by position or name")
    if n != n_args:
        raise print_error(PrintTypeError, kl, op, f"The format string expects {n} "
                          f"argument{'' if n == 1 else 's'}, but got {n_args}")


@MOSAIC.register(PT.DebugPrintOp)
def _debug_print(kl, op, *args, fmt, ordered, has_placeholders, keywords, **params):
    check_print(kl, op, ordered, keywords)
    avals = avals_in(op)
    if all(not a.shape for a in avals):
        _log_scalars(kl, op, args, avals, fmt, has_placeholders)
    elif len(avals) == 1:
        _log_vector(kl, op, args[0], avals[0], fmt, has_placeholders)
    else:
        raise print_error(PrintValueError, kl, op, "All inputs to debug_print must be all "
                          "scalars or a single vector, but got "
                          f"({', '.join(aval_text(a) for a in avals)})")
    return []


def _log_scalars(kl, op, args, avals, fmt, has_placeholders) -> None:
    values = [kl.value(x, a.dtype) for x, a in zip(args, avals)]
    if has_placeholders:
        check_format(kl, op, fmt, len(values))
        if not all(np.dtype(a.dtype).kind in "iu" and np.dtype(a.dtype).itemsize == 4
                   for a in avals):
            raise print_error(PrintTypeError, kl, op, "All arguments must be 32-bit "
                              "integers when using placeholders (`{...}`). If you need to "
                              "print values of other types, remove placeholders from the "
                              "format string.")
        # (Mosaic's log names its values $0, $1, ... in the text)
        fmt = "".join(text if field is None else f"{text}${spec}{i}"
                      for i, (text, field, spec, _) in enumerate(
                          string.Formatter().parse(fmt)))
    tpu.log(values, fmt, formatted=has_placeholders)


def _log_vector(kl, op, x, aval, fmt, has_placeholders) -> None:
    if not has_placeholders or not fmt.endswith("{}"):
        raise print_error(PrintValueError, kl, op,
                          "For vector input, the format string must end with {}.")
    x = kl.value(x, aval.dtype)
    # (the shape goes with the buffer: the chip pads a buffer to whole tiles)
    region = tpu.RegionOp(())
    with ir.InsertionPoint(region.body):
        buf = memref.alloca(ref_type(aval.shape, aval.dtype, "vmem"), [], [])
        zero = index(0)
        vector.store(x, buf, [zero] * len(aval.shape))
        tpu.log_buffer(buf, aval.shape, fmt[:-2])
        tpu.yield_([])
