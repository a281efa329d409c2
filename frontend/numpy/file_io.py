"""Host-side construction, I/O and printing, through NumPy on the host as in JAX:
frombuffer, fromstring, load, save, savez, fromiter/fromfile (refused), and
NumPy's print options."""
from __future__ import annotations

import numpy as _onp

from mjax.specs.dtypes import bfloat16
from mjax.numpy.conversion import asarray


array_repr, array_str = _onp.array_repr, _onp.array_str
get_printoptions, set_printoptions, printoptions = (_onp.get_printoptions,
                                                    _onp.set_printoptions, _onp.printoptions)
save, savez = _onp.save, _onp.savez   # (as JAX's: arrays convert through __array__)


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    return asarray(_onp.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    return asarray(_onp.fromstring(string, dtype=dtype, count=count, sep=sep))


def load(file, *args, **kwargs):
    """np.load, with arrays put on device and bfloat16 read back (an .npz archive stays
    NumPy's lazy mapping)."""
    out = _onp.load(file, *args, **kwargs)
    if isinstance(out, _onp.ndarray) and out.dtype == _onp.dtype("V2"):
        out = out.view(bfloat16)   # (np.save writes bfloat16 as two raw bytes)
    return asarray(out) if isinstance(out, _onp.ndarray) else out


def _impure(name):
    def refuse(*args, **kwargs):
        raise NotImplementedError(
            f"jnp.{name}() is not implemented: it reads a file or consumes an iterator, "
            f"which is a side effect that jit and other transformations cannot replay. "
            f"Use jnp.asarray(np.{name}(...)) outside transformed functions instead.")
    refuse.__name__ = refuse.__qualname__ = name
    return refuse


fromiter, fromfile = _impure("fromiter"), _impure("fromfile")
