"""`pl.select_ref(idx, *refs)`: one of several refs of one type, chosen by a scalar index
when the kernel runs. JAX: pallas/helpers.py select_ref (state/types.py SelectTransform).

As in JAX it works only at the top of a DMA's ends and semaphores: a DMA op taking a
selection is staged once per option, inside a chain of two-branch conds marked
`select_ref` (option 0 where `idx == 0`, else the rest with `idx - 1`), the ends in
argument order, outermost first, as JAX's Mosaic lowering (_select_to_ifop) nests its
`scf.if`s. Views of a selection (`.at[...]`, `.reshape`, `.bitcast`) apply to each
option. Loading from or storing to a selection is refused, as JAX's lowering does.
"""
from __future__ import annotations

import numpy as np

from mjax import lax
from mjax.lax.control_flow import _cond_core
from mjax.tracing.core import aval_of_value, current_trace

_ONLY_DMA = ("pl.select_ref gives a ref for DMAs only (pltpu.async_copy / "
             "make_async_copy ends and their semaphores): {what} of a selected ref is not "
             "supported")


class SelectedRef:
    """One of `options` (refs, views of refs or selections), picked by `idx`."""

    def __init__(self, idx, options):
        self.idx = idx
        self.options = tuple(options)
        first = self.options[0]
        for o in self.options[1:]:
            if tuple(o.shape) != tuple(first.shape) or np.dtype(o.dtype) != np.dtype(
                    first.dtype):
                raise TypeError(f"Cannot select from Refs of different types: "
                                f"{[_short(r) for r in self.options]}")

    shape = property(lambda self: tuple(self.options[0].shape))
    dtype = property(lambda self: self.options[0].dtype)
    ndim = property(lambda self: len(self.shape))

    def __repr__(self):
        return f"select_ref({self.idx!r}, {', '.join(map(repr, self.options))})"

    def _each(self, f) -> "SelectedRef":
        return SelectedRef(self.idx, [f(o) for o in self.options])

    def reshape(self, *shape):
        return self._each(lambda o: o.reshape(*shape))

    def bitcast(self, dtype):
        return self._each(lambda o: o.bitcast(dtype))

    @property
    def at(self):
        return _SelectedAt(self)

    def _refuse(self, what):
        raise NotImplementedError(_ONLY_DMA.format(what=what))

    def __getitem__(self, idx):
        self._refuse("loading")

    def __setitem__(self, idx, value):
        self._refuse("storing")

    get = lambda self, *a, **k: self._refuse("loading")           # noqa: E731
    set = swap = lambda self, *a, **k: self._refuse("storing")    # noqa: E731
    __jax_array__ = __array__ = lambda self, *a, **k: self._refuse("reading")  # noqa: E731


class _SelectedAt:
    def __init__(self, sel: SelectedRef):
        self.sel = sel

    def __getitem__(self, idx) -> SelectedRef:
        return self.sel._each(lambda o: o.at[idx])


def _short(r) -> str:
    return f"{np.dtype(r.dtype).name}{list(r.shape)}"


def _index(idx):
    """`idx` as the cond's i32 scalar index."""
    if isinstance(idx, (bool, np.bool_)):
        raise TypeError(f"pl.select_ref index must be an integer scalar, got {idx!r}")
    if isinstance(idx, (int, np.integer)):
        return np.int32(idx)
    a = aval_of_value(idx)
    if a.shape != () or np.dtype(a.dtype).kind not in "iu":
        raise TypeError(f"pl.select_ref index must be an integer scalar, got "
                        f"{a.str_short()}")
    return idx if np.dtype(a.dtype) == np.int32 else lax.convert_element_type(idx, np.int32)


def select_ref(idx, *refs) -> SelectedRef:
    """The ref of `refs` that `idx` (a scalar, known when the kernel runs) picks; for DMA
    ends and semaphores only (they may be views, or selections). JAX: pl.select_ref."""
    if len(refs) <= 1:
        raise ValueError("At least two refs are required for pl.select_ref.")
    return SelectedRef(_index(idx), refs)


def _switch(idx, options, body, operands=()) -> None:
    """body(option) under `select_ref` conds on idx: option 0 where idx == 0, else the
    rest on idx - 1 (`operands` taken first in each branch)."""
    def first():
        for t in operands:
            current_trace().to_tracer(t)

    def rest():
        first()
        if len(options) > 2:
            _switch(lax.sub(idx, np.int32(1)), options[1:], body)
        else:
            body(options[1])
        return ()
    _cond_core("switch", idx, (lambda: first() or body(options[0]) or (), rest),
               ("option 0", "the other options"), (), params={"select_ref": True})


def each_selected(args, emit, operands=()) -> None:
    """emit(*args) with each SelectedRef of `args` (DMA ends, semaphores; None allowed)
    replaced by the option its index picks, when the kernel runs. `operands` (tracers
    made before the chain) are taken by each branch first, in their order: the order
    the chain's conds get them (JAX's: the DMA's operands)."""
    for k, a in enumerate(args):
        if isinstance(a, SelectedRef):
            _switch(a.idx, a.options,
                    lambda o, k=k: each_selected(args[:k] + (o,) + args[k + 1:], emit),
                    operands)
            return
    emit(*args)


def no_selection(x, what: str):
    """`x`, refused where it is a selection (an op pl.select_ref does not serve)."""
    if isinstance(x, SelectedRef):
        raise NotImplementedError(_ONLY_DMA.format(what=what))
    return x


__all__ = ["SelectedRef", "each_selected", "no_selection", "select_ref"]
