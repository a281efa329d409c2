"""Exception classes with JAX's names."""
from __future__ import annotations


class JAXTypeError(TypeError):
    pass


def _traced(tracer) -> str:
    """A traced value as JAX's messages name it: traced array with shape int32[3]."""
    aval = getattr(tracer, "aval", None)
    if aval is None or not hasattr(aval, "shape"):
        return str(tracer)
    return f"traced array with shape {aval.dtype.name}[{','.join(map(str, aval.shape))}]"


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


class UnexpectedTracerError(Exception):
    """A tracer escaped the transformation that made it (a leaked tracer)."""


class KeyReuseError(RuntimeError):
    pass
