"""Colocated Python classes: instances made lazily, methods run as colocated Python
functions. JAX: jax.experimental.colocated_python.obj."""
from __future__ import annotations

import functools
import inspect

from mjax.experimental.colocated_python.func import ColocatedFunction, Specialization

_SKIPPED = ("__init__", "__del__", "__reduce__", "__reduce_ex__")


class _Instance:
    """The real object behind a wrapper, made at the first method call."""

    def __init__(self, cls, init_args, init_kwargs):
        self.cls, self.init_args, self.init_kwargs = cls, init_args, init_kwargs
        self.obj = None

    def get(self):
        if self.obj is None:
            self.obj = self.cls(*self.init_args, **self.init_kwargs)
        return self.obj


def _make_method(original, callable_: ColocatedFunction):
    """A method of the wrapper: its colocated callable, with `specialize`."""
    def method(*args, **kwargs):
        return callable_(*args, **kwargs)

    def specialize(*args, **kwargs):
        return _make_method(original, callable_.specialize(*args, **kwargs))

    method = functools.wraps(original)(method)
    method.specialize = specialize
    return method


def wrap_class(cls, cls_sourceinfo):
    """The wrapper class of `cls` (see colocated_python_class; `cls_sourceinfo`: JAX's,
    for error messages, unused here)."""
    class WrappedClass:
        @functools.wraps(cls.__init__)
        def __init__(self, *init_args, **init_kwargs):
            instance = self._colocated_python_instance = _Instance(cls, init_args,
                                                                   init_kwargs)
            for name in dir(cls):
                original = getattr(cls, name)
                if not inspect.isfunction(original) or name in _SKIPPED:
                    continue
                call = functools.partial(_call_method, instance, name)
                setattr(self, name, _make_method(
                    original,
                    ColocatedFunction(functools.wraps(original)(call), Specialization())))

    WrappedClass.__name__ = cls.__name__
    WrappedClass.__qualname__ = cls.__qualname__
    WrappedClass.__doc__ = cls.__doc__
    return WrappedClass


def _call_method(instance: _Instance, name: str, *args, **kwargs):
    return getattr(instance.get(), name)(*args, **kwargs)
