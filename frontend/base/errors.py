"""Exception classes with JAX's names and base classes (JAX: jax.errors).

Code written for JAX catches these by their Python base class (`except TypeError`), so
each has JAX's bases: the tracer conversions and leaks are `TypeError`s, a traced boolean
mask an `IndexError`, a failed XLA run jaxlib's own `JaxRuntimeError`.
"""
from __future__ import annotations

from jaxlib._jax import JaxRuntimeError  # noqa: F401  (the class jaxlib raises; JAX's)

# (defined with the dimensions it is about)
from mjax.dialect.shape_poly import InconclusiveDimensionOperation  # noqa: F401

_ERROR_PAGE = "https://docs.jax.dev/en/latest/errors.html"


class _JAXErrorMixin:
    """Appends the JAX documentation page of the error, as JAX's messages end."""

    def __init__(self, message: str):
        super().__init__(f"{message}\nSee {_ERROR_PAGE}#jax.errors.{type(self).__name__}")


class JAXTypeError(_JAXErrorMixin, TypeError):
    pass


class JAXIndexError(_JAXErrorMixin, IndexError):
    pass


def _traced(tracer) -> str:
    """A traced value as JAX's messages name it: traced array with shape int32[3]."""
    aval = getattr(tracer, "aval", None)
    if aval is None or not hasattr(aval, "shape"):
        return str(tracer)
    return f"traced array with shape {_aval_str(aval)}"


def _aval_str(aval) -> str:
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


class ConcretizationTypeError(JAXTypeError):
    """A traced (abstract) value was used where a concrete Python value is needed."""

    def __init__(self, tracer, context: str = ""):
        super().__init__(
            f"Abstract tracer value encountered where concrete value is expected: "
            f"{_traced(tracer)}\n"
            f"{context}\n"
            "The problem arose because a traced array was converted to a Python value "
            "(bool/int/float/index) inside a transformed function (jit, grad, vmap...). "
            "Its value is not known while tracing. Use lax.cond / lax.select / "
            "mjax.numpy.where for value-dependent control flow, or mark the argument static "
            "with jit(..., static_argnums=...) / static_argnames=...")


class TracerBoolConversionError(ConcretizationTypeError):
    """bool() of a traced value."""

    def __init__(self, tracer, context: str = ""):
        # JAX's first line, then where it happened and what to do instead.
        JAXTypeError.__init__(
            self, f"Attempted boolean conversion of {_traced(tracer)}.\n"
            f"{context}\n"
            "Its value is not known while tracing (jit, grad, vmap...): use lax.cond / "
            "lax.select / mjax.numpy.where for value-dependent control flow, or mark the "
            "argument static with jit(..., static_argnums=...) / static_argnames=...")


class TracerIntegerConversionError(JAXTypeError):
    """int()/index of a traced value."""

    def __init__(self, tracer, context: str = ""):
        super().__init__(
            f"The __index__() method was called on {_traced(tracer)}\n"
            f"{context + '. ' if context else ''}Its value is not known while tracing; mark the argument static with "
            "jit(..., static_argnums=...), use lax.cond / mjax.numpy.where for value-dependent "
            "choices, or lax.dynamic_slice / indexing with arrays.")


class TracerArrayConversionError(JAXTypeError):
    """numpy conversion of a traced value."""

    def __init__(self, tracer):
        super().__init__(
            f"The numpy.ndarray conversion method __array__() was called on "
            f"{_traced(tracer)}\nUse mjax.numpy instead of numpy inside transformed functions.")


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that made it (a leaked tracer)."""


class NonConcreteBooleanIndexError(JAXIndexError):
    """Boolean mask indexing with a traced mask (its result shape is not static)."""

    def __init__(self, tracer):
        aval = getattr(tracer, "aval", None)
        what = _aval_str(aval) if hasattr(aval, "shape") else str(tracer)
        super().__init__(
            f"Array boolean indices must be concrete; got {what}\n"
            "The result's shape would depend on the mask's values. Use "
            "mjax.numpy.where(mask, x, fill) for a traced mask.")


class KeyReuseError(JAXTypeError):
    """A PRNG key was used twice (with jax_debug_key_reuse)."""


class JaxprTypeError(TypeError):
    """A jaxpr failed its type check (mjax: the --jaxpr-verify pass raises its own)."""


__all__ = ["ConcretizationTypeError", "InconclusiveDimensionOperation", "JAXIndexError",
           "JAXTypeError", "JaxRuntimeError", "JaxprTypeError", "KeyReuseError",
           "NonConcreteBooleanIndexError", "TracerArrayConversionError",
           "TracerBoolConversionError", "TracerIntegerConversionError",
           "UnexpectedTracerError"]
