"""The errors of a print inside a kernel (`jaxpr.debug_print`) that the Mosaic and Triton
lowerings share: JAX's exceptions and messages, raised at the print's line.
JAX: pallas/mosaic/lowering.py and pallas/triton/lowering.py (their debug_print rules).
"""
from __future__ import annotations

import numpy as np

from mjax.passes.registry import PassError, op_error


class PrintValueError(PassError, ValueError):
    """A print the lowering refuses (JAX raises ValueError)."""


class PrintTypeError(PassError, TypeError):
    """A print whose values the lowering cannot format (JAX raises TypeError)."""


class PrintNotImplementedError(PassError, NotImplementedError):
    """An ordered print (JAX raises NotImplementedError)."""


def print_error(cls, kl, op, message: str) -> PassError:
    """`cls` at the print's line, prefixed as the lowering's other errors."""
    return cls(op, op_error(op, f"{kl.flag}: {message}").message)


def check_print(kl, op, ordered: bool, keywords: bool) -> None:
    """What both lowerings refuse: ordered prints and keyword arguments."""
    if ordered:
        raise print_error(PrintNotImplementedError, kl, op,
                          "Ordered debug_print is not supported on Pallas.")
    if keywords:
        raise print_error(PrintValueError, kl, op, "Only positional arguments are "
                          "supported by debug_print on Pallas.")


def aval_text(a) -> str:
    """An aval as JAX's ShapedArray prints in its errors."""
    return f"ShapedArray({np.dtype(a.dtype).name}[{','.join(map(str, a.shape))}])"


__all__ = ["PrintNotImplementedError", "PrintTypeError", "PrintValueError", "aval_text",
           "check_print", "print_error"]
