"""Derived functions keyed structurally: (callee, transformation, parameters) -> symbol.

    derived = DerivedTable(fns)
    name = derived.get("f", JvpOp, diff_args=(0,), diff_results=(0,))   # None if not made
    derived.add(name, "f", JvpOp, diff_args=(0,), diff_results=(0,))

A transformation is a class: the op class that asks for it (`JvpOp`, `VmapOp`) or a
marker class of the pass (`reverse.Linearize`, `reverse.Transpose`); parameters are
frozen into a hashable tuple. Lookups are dict lookups. So that a module printed and
re-parsed (mjax-opt) reuses what it already holds, each derived function also carries
an attribute naming what it was derived from:

    func.func private @f_jvp(...) attributes {mjax.derived = {from = "f",
        by = "jvp", params = "(('diff_args', (0,)), ('diff_results', (0,)))"}}

(`from` is a string, not a symbol reference, so it does not keep @f alive.)
"""
from __future__ import annotations

import ast

from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.passes.ir_util import DERIVED_MARK, FunctionTable

MARK = DERIVED_MARK
# A nested jit's or checkpoint's function carries the scope JAX names its ops under
# (`jit(g)`, `checkpoint`: passes/rules/op_names.py); what is derived from it keeps it.
SCOPE_ATTR = "mjax.scope"


def transform_name(cls) -> str:
    """The name a transformation class is recorded under in the marker attribute."""
    return getattr(cls, "primitive", None) or cls.__name__.lower()


_SCALARS = frozenset({int, bool, str, float, type(None)})


def _freeze(value):
    t = type(value)
    if t in _SCALARS:
        return value
    if t is tuple or t is list:     # (most: flat tuples of ints, frozen as they are)
        if _SCALARS.issuperset(map(type, value)):
            return value if t is tuple else tuple(value)
        return tuple(map(_freeze, value))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, A.Symbol):
        return str(value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    return value


def freeze(params: dict) -> tuple:
    """Parameters as a hashable, printable tuple of (name, value), sorted by name."""
    return tuple(sorted((k, _freeze(v)) for k, v in params.items()))


class DerivedTable:
    """The functions of one module derived from others, by (callee, transform, params)."""

    def __init__(self, fns: FunctionTable):
        self.fns = fns
        self.table: dict[tuple, str] = {}
        self._marked: dict[tuple, str] = {}    # (callee, transform name, params) -> symbol
        for name, fn in fns.table.items():
            if MARK in fn.attributes:
                d = ir.DictAttr(fn.attributes[MARK])
                try:
                    params = ast.literal_eval(ir.StringAttr(d["params"]).value)
                except (KeyError, ValueError, SyntaxError):
                    continue               # a hand-edited marker: just don't reuse it
                key = (ir.StringAttr(d["from"]).value, ir.StringAttr(d["by"]).value, params)
                self._marked[key] = name

    def get(self, callee: str, transform: type, **params) -> str | None:
        frozen = freeze(params)
        name = self.table.get((str(callee), transform, frozen))
        if name is None:
            name = self._marked.get((str(callee), transform_name(transform), frozen))
        return name if name is not None and name in self.fns else None

    def add(self, name: str, callee: str, transform: type, **params) -> None:
        frozen = freeze(params)
        self.table[(str(callee), transform, frozen)] = name
        fn = self.fns.get(name)
        source = self.fns.table.get(str(callee))
        if source is not None and SCOPE_ATTR in source.attributes:   # (jvp(jit(g))/cos)
            fn.attributes[SCOPE_ATTR] = source.attributes[SCOPE_ATTR]
        fn.attributes[MARK] = ir.DictAttr.get({
            "from": ir.StringAttr.get(str(callee)),
            "by": ir.StringAttr.get(transform_name(transform)),
            "params": ir.StringAttr.get(repr(frozen))})

    def forget(self, name: str) -> None:
        """Drops every entry naming @name (before the function is erased)."""
        for table in (self.table, self._marked):
            for key in [k for k, v in table.items() if v == name]:
                del table[key]


__all__ = ["MARK", "SCOPE_ATTR", "DerivedTable", "freeze", "transform_name"]
