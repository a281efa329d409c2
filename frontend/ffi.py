"""JAX: jax.ffi: foreign functions (XLA custom calls) from compiled libraries.

Registering a target works as in JAX (jaxlib's registry, CPU and GPU); calling one from
a program (`ffi_call`) needs a custom-call op in mjax's jaxpr dialect, which it lacks
yet: ffi_call and the lowering builders raise NotImplementedError.
"""
from __future__ import annotations

import ctypes
import os

import jaxlib
from jaxlib import xla_client

__all__ = ["ffi_call", "ffi_lowering", "build_ffi_lowering_function", "include_dir",
           "pycapsule", "register_ffi_target", "register_ffi_target_as_batch_partitionable",
           "register_ffi_type", "register_ffi_type_id"]

_NO_CUSTOM_CALL = ("mjax's jaxpr dialect has no custom-call op yet, so foreign "
                   "functions registered with register_ffi_target cannot be called from "
                   "mjax programs")


def include_dir() -> str:
    """The directory of the XLA FFI headers that jaxlib ships."""
    return os.path.join(os.path.dirname(jaxlib.__file__), "include")


def pycapsule(funcptr):
    """A ctypes function pointer wrapped in a PyCapsule (what register_ffi_target takes)."""
    destructor = ctypes.CFUNCTYPE(None, ctypes.py_object)
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = (ctypes.c_void_p, ctypes.c_char_p, destructor)
    return new(funcptr, None, destructor(0))


def register_ffi_target(name: str, fn, platform: str = "cpu", api_version: int = 1,
                        **kwargs) -> None:
    """Registers a foreign function (a PyCapsule, or a dict of them for stateful
    handlers) under `name` for `platform`, in jaxlib's custom-call registry."""
    return xla_client.register_custom_call_target(name, fn, platform, api_version, **kwargs)


def register_ffi_type(name: str, type_registration, platform: str = "cpu") -> None:
    return xla_client.register_custom_type(name, type_registration, platform=platform)


def register_ffi_type_id(name: str, obj, platform: str = "cpu") -> None:
    raise ValueError("register_ffi_type_id is not supported after jaxlib version 381.")


def register_ffi_target_as_batch_partitionable(name: str) -> None:
    xla_client.register_custom_call_as_batch_partitionable(name)


def ffi_call(target_name: str, result_shape_dtypes, *, has_side_effect: bool = False,
             vmap_method: str | None = None, input_layouts=None, output_layouts=None,
             input_output_aliases=None, custom_call_api_version: int = 4,
             legacy_backend_config: str | None = None):
    raise NotImplementedError(f"jax.ffi.ffi_call({target_name!r}): {_NO_CUSTOM_CALL}")


def ffi_lowering(call_target_name: str, *, operand_layouts=None, result_layouts=None,
                 backend_config=None, skip_ffi_layout_processing: bool = False,
                 **lowering_args):
    raise NotImplementedError(f"jax.ffi.ffi_lowering({call_target_name!r}): "
                              f"{_NO_CUSTOM_CALL}")


def build_ffi_lowering_function(call_target_name: str, *, operand_layouts=None,
                                result_layouts=None, backend_config=None,
                                skip_ffi_layout_processing: bool = False, **lowering_args):
    raise NotImplementedError(f"jax.ffi.build_ffi_lowering_function({call_target_name!r}): "
                              f"{_NO_CUSTOM_CALL}")
