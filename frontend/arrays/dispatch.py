"""The one execute path: every compiled program the frontend runs (jit's general path,
eager ops, `Compiled` stages, eager AD's split programs, multi-device exports) runs here.

`execute(exe, bufs, ...)` runs `exe` (runtime/xla.py's or runtime/iree.py's Executable) on
device buffers and returns the output buffers, or Arrays of `out_avals`. What a failed
run raises is decided here once: an Array among `leaves` that the user deleted raises the
Array's RuntimeError (with `any_deleted`, a donated one too: eager ops, as JAX's), and an
error a host callback raised with `raise_in_caller` is raised as it is. Donation and host
callbacks live in the program; the executable's `execute` moves buffers of another device
or layout and keeps the tokens of programs with effects.

Beside this path, jit's cached call (`Jitted.__call__`, runtime/_fastpath.c) and eager's
(runtime/_eagerpath.c) run a cache entry's direct call (`Executable.direct_call`)
themselves and hand every failure to a path that ends here.
"""
from __future__ import annotations

from mjax.arrays.array import Array
from mjax.arrays.host_callbacks import errors_for_caller


def execute(exe, bufs, out_avals=None, leaves=(), run=None, handlers=None,
            any_deleted=False):
    """Runs `exe` on `bufs` (arguments, then constants): the output buffers, or Arrays
    of `out_avals` where given. `leaves`: the call's arguments, whose deletion explains a
    failure; `run`, `handlers`: the executable's direct call (`direct_call()`), tried
    first (where it fails, `exe.execute` runs: it explains errors and moves buffers)."""
    try:
        results = None
        if run is not None:
            try:
                results = run(bufs)
            except Exception:   # noqa: BLE001 - execute below says what went wrong
                pass
        outs = exe.execute(bufs) if results is None else \
            results.consume_with_handlers(handlers)
    except Exception:
        _explain(leaves, any_deleted)
        with errors_for_caller():
            raise
    if out_avals is None:
        return outs
    if len(outs) == 1:
        return [Array(outs[0], out_avals[0])]
    return [Array(b, a) for b, a in zip(outs, out_avals)]


def _explain(leaves, any_deleted: bool) -> None:
    """After a failed run: a deleted Array among `leaves` raises its RuntimeError (one
    deleted by `.delete()`; with `any_deleted`, a donated one too). Otherwise jaxlib's
    Execute() error stands, as under JAX's jit cache."""
    for x in leaves:
        if type(x) is Array and (any_deleted or getattr(x, "_user_deleted", False)):
            x._check_alive()


__all__ = ["execute"]
