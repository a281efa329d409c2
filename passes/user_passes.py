"""Users' passes in jit's compile pipeline: the lists jit takes, `extra`, and the check
after each one.

    jit(f, passes=[Bf16Matmul()])                      # one function
    with mjax.passes.extra(CountFlops()): ...          # jit calls made in the block
    mjax.config.update("mjax_extra_passes", [StripDebugPrints()])   # the process
    MJAX_EXTRA_PASSES='strip-debug-prints' ...         # (text: registered flags)

Each pass runs at its `point` (registry.POINTS) and the verifier runs after it: IR it
leaves invalid is a PassError naming the pass and the op.
"""
from __future__ import annotations

from typing import Callable

from jaxlib.mlir import ir

from mjax.passes.ir_util import nested_ops
from mjax.passes.jaxpr_verify import verify_module
from mjax.passes.registry import (PASSES, POINTS, Pass, PassError, make_pass,
                                  parse_pipeline)


class PassList(tuple):
    """A tuple of Pass instances and (flag, options) pairs, equal and hashed by what each
    pass was when the list was made (its class, point and options: `Pass.key`), so it
    can be part of jit's cache key even though dataclass passes are unhashable, and a
    pass that keeps results in attributes does not change the key by running."""

    def __new__(cls, items=()):
        self = super().__new__(cls, items)
        self._key = tuple(p.key() if isinstance(p, Pass) else p for p in self)
        return self

    def __eq__(self, other):
        return isinstance(other, PassList) and self._key == other._key

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self._key)

    def __add__(self, other):
        return PassList(tuple(self) + tuple(pass_list(other)))


def pass_list(value) -> PassList:
    """Normalizes what jit(passes=), `extra` and mjax_extra_passes take: None, a Pass, a
    pipeline text of registered flags ('a,b{opt=1}'), or a sequence of those."""
    if value is None:
        return PassList()
    if isinstance(value, (Pass, str)):
        value = [value]
    if isinstance(value, type) and issubclass(value, Pass):
        raise TypeError(f"expected a pass instance, got the class {value.__name__} "
                        f"(write {value.__name__}())")
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"expected mjax.passes.Pass instances or pass pipeline text, got "
                        f"{value!r}") from None
    out = []
    for item in items:
        if isinstance(item, Pass):
            out.append(item)
        elif isinstance(item, str):
            out.extend(parse_pipeline(item))         # (ValueError on bad syntax)
        elif isinstance(item, tuple) and len(item) == 2 and all(
                isinstance(s, str) for s in item):
            out.append(item)
        elif isinstance(item, type) and issubclass(item, Pass):
            raise TypeError(f"expected a pass instance, got the class {item.__name__} "
                            f"(write {item.__name__}())")
        else:
            raise TypeError(f"expected mjax.passes.Pass instances or pass pipeline text, "
                            f"got {item!r}")
    return PassList(out)


def instantiate(entries) -> list[Pass]:
    """The Pass instances of a PassList: flags are looked up in the registry now (a
    plugin may register them after the option was set)."""
    passes = []
    for entry in entries:
        if isinstance(entry, Pass):
            passes.append(entry)
            continue
        name, options = entry
        if name not in PASSES:
            raise ValueError(f"unknown pass '{name}' (register it with "
                             f"mjax.passes.register_pass, or load its plugin with "
                             f"mjax.passes.load_pass_plugin)")
        passes.append(make_pass(name, options))
    return passes


class Checked(Pass):
    """Runs a user's pass, then the verifier; errors name the pass (and the op)."""

    def __init__(self, inner: Pass):
        self.inner = inner
        self.flag = inner.flag or type(inner).__name__
        if inner.point not in POINTS:
            raise ValueError(f"pass '{self.flag}' has point {inner.point!r}; the points "
                             f"are {', '.join(POINTS)}")
        self.point = inner.point

    def _name(self) -> str:
        cls = type(self.inner).__qualname__
        return f"'{self.flag}'" + (f" ({cls})" if cls != self.flag else "")

    def run(self, module: ir.Module) -> None:
        try:
            self.inner.run(module)
        except PassError as e:
            raise PassError(e.location, f"in pass {self._name()}: {e.message}") from None
        try:
            verify_module(module)
        except PassError as e:
            raise PassError(e.location, f"IR invalid after pass {self._name()}: "
                                        f"{e.message}") from None
        except ir.MLIRError as e:
            first = (e.error_diagnostics or [None])[0]
            where = first.location if first is not None else None
            message = first.message if first is not None else str(e)
            if where is not None and not message.startswith("'"):
                message = _ops_at(module, where) + message
            raise PassError(where, f"IR invalid after pass {self._name()}: {message}"
                            ) from None


def _ops_at(module: ir.Module, where: ir.Location) -> str:
    """`'stablehlo.sine' op ` for the op(s) at `where` (some of MLIR's verifier messages
    do not name the op; the location may be the user's line of several)."""
    names = sorted({op.name for op in nested_ops(module) if op.location == where})
    if not names:
        return ""
    if len(names) == 1:
        return f"'{names[0]}' op "
    return f"(one of the ops at this line: {', '.join(repr(n) for n in names)}) "


# `extra(...)`: a config override of mjax_extra_passes, which mjax.config (a floor above
# this package) defines; it fills this slot when imported (`import mjax` does).
_SCOPE: list[Callable | None] = [None]


def set_extra_scope(fn: Callable) -> None:
    _SCOPE[0] = fn


def extra(*passes):
    """`with mjax.passes.extra(MyPass(), ...):` every jit compiled in the block (in this
    thread) also runs these passes, after those of mjax_extra_passes."""
    scope = _SCOPE[0]
    if scope is None:
        raise RuntimeError("mjax.passes.extra needs mjax's frontend: import mjax first")
    return scope(pass_list(list(passes)))


__all__ = ["Checked", "PassList", "extra", "instantiate", "pass_list"]
