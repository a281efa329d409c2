"""Eager ops' cache hit in C, when built (what it saves: docs/performance.md, "Eager ops").

`mjax.runtime._eagerpath` (runtime/_eagerpath.c, built by setup.py when a C compiler is
there) takes an op on `mjax.Array`s whose program is already in `apply_eager`'s cache from
its operands to jaxlib's execute and back, without running Python. `fast_bind(bind)`
wraps `core.bind`; `fast_op(f, opcls, keep)` wraps a jnp function or array operator that,
for operands of one non-weak aval of a dtype in `keep`, is exactly `bind(opcls, *args)`.
Every other call goes to the Python function, unchanged. MJAX_NO_C_FASTPATH=1 (read at
import) keeps the Python path only. `fast_fused(call, learn, needs_values)` wraps a
fused_when_eager function: its calls on Arrays with plain keywords run the cached jit in C
(so do calls with NumPy scalar operands and operands of different avals: their Python
path costs as much as a whole op does in JAX).
"""
from __future__ import annotations

import functools

import numpy as np

from mjax.arrays import eager
from mjax.arrays.array import Array
from mjax.config import config
from mjax.dialect import ShapedArray
from mjax.runtime import c_fast_path
from mjax.base.traceback_util import api_boundary

C_EAGER = c_fast_path("_eagerpath")   # (None: the Python path does it all)
if C_EAGER is not None and not hasattr(C_EAGER, "set_entry"):
    C_EAGER = None      # (built from an older _eagerpath.c: rebuild it with setup.py)

_VALUES = config._values
_NUMPY_TYPES = (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                np.uint32, np.uint64, np.float16, np.float32, np.float64, np.complex64,
                np.complex128)
# Types of op params that eager.hashable keeps as they are (the C path builds its key from
# them, and from tuples of them; other params take the Python path).
_PLAIN_PARAMS = frozenset([int, float, bool, str, type(None)] +
                          [type(np.dtype(t)) for t in _NUMPY_TYPES])
# The NumPy scalar types a fast_op(..., numpy_scalars=True) passes to its learn
# (np.float32(2) * x).
NUMPY_SCALARS = frozenset(_NUMPY_TYPES)


def _validate():
    """(config epoch, whether the C path may run ops under it): not with a default device
    (placement), jax_no_execution or jax_debug_nans/infs (checks after each op), nor with
    jax_disable_jit (fused functions then run op by op). (Every config.update starts a new
    epoch.)"""
    epoch = config.trace_state()
    return epoch, (_VALUES["jax_default_device"] is None and not _VALUES["jax_no_execution"]
                   and not _VALUES["jax_debug_nans"] and not _VALUES["jax_debug_infs"]
                   and not _VALUES["jax_disable_jit"])


def fast_bind(bind, trace_state):
    """core.bind with the cache hit in C (bind itself when the C module is not there)."""
    if C_EAGER is None:
        return bind
    C_EAGER.setup(Array, ShapedArray, config, trace_state, eager._CACHE, _validate)
    C_EAGER.set_entry(eager.EagerEntry)     # (the named fields it reads)
    C_EAGER.set_plain_types(_PLAIN_PARAMS)
    C_EAGER.set_numpy_scalars(NUMPY_SCALARS)
    eager.CLEAR_HOOKS.append(C_EAGER.invalidate)
    return functools.update_wrapper(C_EAGER.EagerOp(bind), bind)


def fast_op(f, opcls, keep, learn=None, reflected=False, numpy_scalars=False, pair=None):
    """`f`, whose calls on Arrays of one non-weak aval with a dtype in `keep` are
    `bind(opcls, *args)`, with those calls' cache hits in C. learn(x, s), if given: for
    `f(x, s)` with such an Array x and a Python int/float s (numpy_scalars: or a NumPy
    scalar of NUMPY_SCALARS), a constant c with x's aval such that the call is
    `bind(opcls, x, c)` (reflected: `bind(opcls, c, x)`, and only such calls take the C
    path), or None (the C path keeps c per scalar type, for the last scalar). pair(x, y),
    if given (not reflected): for Arrays whose avals are not one such aval, the eager cache
    keys of the conversions of x and y (None: as it is) and of the op on their results
    that the call is, or None (the C path keeps them for the last pair of avals)."""
    # (JAX's jnp functions and array operators are jits: an error raised in one, such as
    # debug_nans' FloatingPointError, reaches the user without the frames below it.)
    f = api_boundary(f)
    if C_EAGER is None:
        return f
    op = C_EAGER.EagerOp(f, opcls, frozenset(keep), learn, reflected, numpy_scalars, pair)
    return functools.update_wrapper(op, f)


def fast_fused(call, learn, needs_values):
    """`call`, a fused_when_eager function, whose calls on Arrays (positional) with keyword
    arguments that are ints, bools, None or strings run the jit `learn(*args, **kwargs)`
    gives (the one `call` runs for them; None: not compiled yet) with those Arrays, its
    cache hit in C. After one of the `needs_values` errors (a data-dependent shape), that
    pattern's calls take the Python path."""
    if C_EAGER is None:
        return call
    op = C_EAGER.EagerOp(call, None, None, None, False, False, None, learn, needs_values)
    return functools.update_wrapper(op, call)


__all__ = ["C_EAGER", "NUMPY_SCALARS", "fast_bind", "fast_fused", "fast_op"]
