"""Eager ops' cache hit in C, when built (docs/performance.md, "Eager ops, third pass").

`mjax.runtime._eagerpath` (runtime/_eagerpath.c, built by setup.py when a C compiler is
there) takes an op on `mjax.Array`s whose program is already in `apply_eager`'s cache from
its operands to jaxlib's execute and back, without running Python. `fast_bind(bind)`
wraps `core.bind`; `fast_op(f, opcls, keep)` wraps a jnp function or array operator that,
for operands of one non-weak aval of a dtype in `keep`, is exactly `bind(opcls, *args)`.
Every other call goes to the Python function, unchanged. MJAX_NO_C_FASTPATH=1 (read at
import) keeps the Python path only.
"""
from __future__ import annotations

import functools

import numpy as np

from mjax import eager
from mjax.array import Array
from mjax.config import config
from mjax.dialect import ShapedArray
from mjax.runtime import c_fast_path

C_EAGER = c_fast_path("_eagerpath")   # (None: the Python path does it all)

_VALUES = config._values
# Types of op params that eager.hashable keeps as they are (the C path builds its key from
# them, and from tuples of them; other params take the Python path).
_PLAIN_PARAMS = frozenset([int, float, bool, str, type(None)] + [
    type(np.dtype(t)) for t in (bool, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                np.uint16, np.uint32, np.uint64, np.float16, np.float32,
                                np.float64, np.complex64, np.complex128)])


def _validate():
    """(config epoch, whether the C path may run ops under it): not with a default device
    (placement), jax_no_execution or jax_debug_nans/infs (checks after each op)."""
    epoch = config.trace_state()
    return epoch, (_VALUES["jax_default_device"] is None and not _VALUES["jax_no_execution"]
                   and not _VALUES["jax_debug_nans"] and not _VALUES["jax_debug_infs"])


def fast_bind(bind, trace_state):
    """core.bind with the cache hit in C (bind itself when the C module is not there)."""
    if C_EAGER is None:
        return bind
    C_EAGER.setup(Array, ShapedArray, config, trace_state, eager._CACHE, _validate)
    C_EAGER.set_plain_types(_PLAIN_PARAMS)
    eager.CLEAR_HOOKS.append(C_EAGER.invalidate)
    return functools.update_wrapper(C_EAGER.EagerOp(bind), bind)


def fast_op(f, opcls, keep, learn=None, reflected=False):
    """`f`, whose calls on Arrays of one non-weak aval with a dtype in `keep` are
    `bind(opcls, *args)`, with those calls' cache hits in C. learn(x, s), if given: for
    `f(x, s)` with such an Array x and a Python int/float s, a constant c with x's aval
    such that the call is `bind(opcls, x, c)` (reflected: `bind(opcls, c, x)`, and only
    such calls take the C path), or None (the C path keeps c per scalar)."""
    if C_EAGER is None:
        return f
    op = C_EAGER.EagerOp(f, opcls, frozenset(keep), learn, reflected)
    return functools.update_wrapper(op, f)


__all__ = ["C_EAGER", "fast_bind", "fast_op"]
