"""Expansion of transformation ops, driven by one table keyed by op class.

    EXPAND[JvpOp] = rule          # rule(expander, op): replace `op` (jvp, vjp, vmap, ...)
    EXPAND[CallOp] = KEEP         # stays; only the functions it names are expanded

`EXPAND` is a RuleTable of passes/rules/tables.py. `Expander.expand_function(name)` walks
@name, and for every transformation op first expands the functions the op names
(inner-first, to any depth), then applies the op's rule. A transformation op with no
entry is a located error, never a call. So `jaxpr.jvp @g` where @g holds `jaxpr.vmap @f`
batches @f into @f_batched, rewrites @g to call it, and only then differentiates @g.

The rules live with their transformation: jvp and vjp in passes/autodiff.py, vmap in
passes/batching.py. The expander also holds what they share: the module's functions
(`fns`) and the derived-function table (`derived`).
"""
from __future__ import annotations

from typing import Callable

from jaxlib.mlir import ir

from mjax.dialect.attributes import Symbol
from mjax.dialect.builder import Builder
from mjax.dialect.core import OPS
from mjax.dialect.ops import transforms as T
from mjax.dialect.ops.checkify import CheckifyOp
from mjax.passes import analyses
from mjax.passes.custom_rules import bwd_part, materialize
from mjax.passes.derived import DerivedTable
from mjax.passes.ir_util import (FunctionTable, callee_of, nested_ops, reachable_functions,
                                 replace_op)
from mjax.passes.registry import op_error
from mjax.passes.rules.tables import EXPAND
from mjax.passes.user_primitives import lower_user_primitives

ExpandRule = Callable[["Expander", ir.Operation], None]


_PURE: tuple = (-1, frozenset())     # (len(OPS) when made, the names of pure ops)


def _maybe_impure(name: str) -> bool:
    """Whether an op of this name may have effects, or may make expansion emit some."""
    cls = OPS.get(name)
    if cls is None:
        return name.startswith("jaxpr.")      # (has_effects asks such an op's view)
    return (cls.pure is not True and name != "jaxpr.yield") or cls is CheckifyOp


def KEEP(expander: "Expander", op: ir.Operation) -> None:
    """Rule of ops that stay (calls); the functions they name are expanded already."""


def _internal(expander, op):
    raise op_error(op, "is internal to --jaxpr-vjp and must not appear outside it")


EXPAND.update({
    T.CallOp: KEEP,
    T.CheckpointOp: KEEP,
    T.CustomJvpCallOp: KEEP,
    T.CustomVjpCallOp: KEEP,
    T.CheckpointTangentOp: _internal,
    T.CustomVjpTangentOp: _internal,
    T.CustomVjpBwdOp: KEEP,    # its bwd rule is traced by lower_custom_calls
})


# The ops _lower_custom_calls rewrites.
_CUSTOM_CALLS = (T.CustomJvpCallOp, T.CustomVjpCallOp, T.CheckpointOp, T.CustomVjpBwdOp)


# (callee's function type attribute, operand types) -> the result types of the plain
# jaxpr.call Expander.call made for them: the rules call functions of the same types on
# the same types again and again.
_CALLS: dict = {}


class Expander:
    """Expansion over one module: its functions, derived functions and per-pass state."""

    def __init__(self, module):
        self.module = module
        self.fns = FunctionTable(module)
        self.derived = DerivedTable(self.fns)
        self.state: dict = {}          # per-transformation helpers (e.g. the batcher)
        self._done: set = set()
        # What expand_function met: a rule that may have changed the module (not KEEP),
        # and custom_jvp/custom_vjp/checkpoint ops (lower_custom_calls' business).
        self.rules_run = False
        self.custom_seen = False
        # Whether Python rules were traced into the module during expansion (custom
        # rules, user primitives' rules, hijax batching): their functions were not looked
        # into, so they may hold custom calls (passes/custom_rules.py sets it).
        self.traced_rules = False
        # Set by the lowering pipeline's full expansion (autodiff.expand_transforms):
        # what only printed jaxprs show (grad's dead primal call) may be dropped early.
        self.lowering = False
        self._effect_free = None

    def effect_free(self) -> bool:
        """Whether no op of the module can have effects (has_effects is False for every
        op, so its walks are skipped): the pipeline's census of op names holds no impure
        op nor a checkify transformation (its rules emit checks), and no Python rule was
        traced in (rules of pure ops emit pure ops). Outside a pipeline: False."""
        if self.traced_rules:
            return False
        if self._effect_free is None:
            names = analyses.pipeline_op_names(self.module)
            self._effect_free = names is not None and not any(map(_maybe_impure, names))
        return self._effect_free

    def names_after(self) -> frozenset | None:
        """A superset of the names of the module's ops after expansion, where it was
        effect-free (`effect_free`): the pipeline's census plus every pure jaxpr op
        (the rules emit only those) and the func ops around them; None otherwise."""
        if not self.effect_free() or self.state.get("shard_maps"):
            return None
        global _PURE
        if _PURE[0] != len(OPS):      # (OPS grows as modules register ops)
            _PURE = (len(OPS), frozenset(n for n in OPS if not _maybe_impure(n))
                     | {"builtin.module", "func.func", "func.return", "func.call"})
        return analyses.pipeline_op_names(self.module) | _PURE[1]

    def expand_function(self, name: str, only: frozenset | None = None) -> None:
        """Expands the transformation ops in @name whose class is in `only` (default:
        all), after expanding the functions they and @name's calls name."""
        key = (str(name), only)
        if key in self._done:
            return
        self._done.add(key)
        for op in nested_ops(self.fns.get(name)):
            cls = OPS.get(op.name)    # (an op's class from its name: no OpView made)
            if cls is None or not issubclass(cls, T.TransformOp):
                if cls is not None and "callee" not in cls.attributes:
                    continue     # (a jaxpr op names a function by its declared callee)
                callee = callee_of(op)
                if callee is not None and callee in self.fns:
                    self.expand_function(callee, only)
                continue
            if issubclass(cls, _CUSTOM_CALLS):
                self.custom_seen = True
            view = op.opview
            rule = EXPAND.get(cls)
            if rule is None:
                raise op_error(op, f"no expansion rule for transformation op "
                                   f"'{op.name}' (known: "
                                   f"{', '.join(sorted(c.OPERATION_NAME for c in EXPAND))})")
            params = view.params
            for attr in cls.callee_attributes:
                if params[attr] is not None:    # (rules known by a handle: not traced)
                    self.expand_function(str(params[attr]), only)
            if only is None or cls in only:
                if rule is not KEEP:
                    self.rules_run = True
                rule(self, op)

    def expand_all(self, only: frozenset | None = None) -> None:
        for name in list(self.fns.table):
            if name in self.fns:
                self.expand_function(name, only)

    # -- helpers for rules ---------------------------------------------------------------
    def call(self, b: Builder, callee: str, operands, cls=T.CallOp, **params):
        """Emits `cls @callee(operands)` (a jaxpr.call by default); returns its results."""
        key = None
        if cls is T.CallOp and not params:
            # (A plain call's result types follow from the callee's type and the operand
            # types: checked and inferred once per pair, see _CALLS. Its one attribute
            # names the callee, whose name is new in every expansion.)
            fn = self.fns.table.get(str(callee))
            if fn is not None:
                key = (fn.attributes["function_type"], tuple([v.type for v in operands]))
                hit = _CALLS.get(key)
                if hit is not None:
                    return list(ir.Operation.create(
                        cls.OPERATION_NAME, results=hit, operands=list(operands),
                        attributes={"callee": ir.FlatSymbolRefAttr.get(
                            str(callee), context=fn.context)},
                        regions=cls.num_regions, loc=b.loc, ip=b.ip).results)
        results = T.emit_transform(b, cls, *operands, signature=self.fns.signature,
                                   callee=Symbol(callee), **params)
        if key is not None and results:
            attrs = results[0].owner.operation.attributes
            named = ir.FlatSymbolRefAttr.get(str(callee), context=fn.context)
            if len(attrs) == 1 and attrs[0].name == "callee" and attrs[0].attr == named:
                if len(_CALLS) >= 4096:
                    _CALLS.clear()
                _CALLS[key] = [r.type for r in results]
        return results

    def replace(self, op: ir.Operation, values) -> None:
        replace_op(op, values)


def lower_custom_calls(expander: Expander, bwd_only: bool = False) -> None:
    """custom_jvp_call / custom_vjp_call / checkpoint @f(x) -> jaxpr.call @f(x): what is
    left of them outside differentiation (not with `bwd_only`); custom_vjp_bwd -> a call
    of its bwd rule, traced now, in the functions the module's public functions use (the
    others are dropped by --jaxpr-dce: an eager vjp's forward program never traces
    bwd). Not with `bwd_only`, user-defined primitives become calls of their
    `lower_fun` lowerings too (passes/user_primitives.py)."""
    _lower_custom_calls(expander, list(expander.fns.table), _used_functions(expander),
                        not bwd_only)
    if not bwd_only:
        lower_user_primitives(expander)


def lower_bwd_rules(expander: Expander, roots) -> None:
    """Traces the custom_vjp bwd rules that the functions `roots` reach, now."""
    used = _used_functions(expander, roots)
    _lower_custom_calls(expander, sorted(used), used, False)


def _lower_custom_calls(expander: Expander, names, used: set, calls: bool) -> None:
    for name in names:
        for op in nested_ops(expander.fns.get(name)):
            cls = OPS.get(op.name)    # (the OpView only for the ops looked into)
            if cls is None or not issubclass(cls, _CUSTOM_CALLS):
                continue
            view = op.opview
            if calls and isinstance(view, (T.CustomJvpCallOp, T.CustomVjpCallOp,
                                           T.CheckpointOp)):
                b = Builder(ir.InsertionPoint(op), op.location)
                replace_op(op, expander.call(b, str(view.params["callee"]), op.operands))
            elif isinstance(view, T.CustomVjpBwdOp) and name in used:
                part = bwd_part(view.params["zero_cotangents"])
                bwd = materialize(expander, view.params["rule"], part, op)
                brought = _used_functions(expander, [bwd]) - used
                used |= brought
                _lower_custom_calls(expander, sorted(brought), used, calls)
                b = Builder(ir.InsertionPoint(op), op.location)
                replace_op(op, expander.call(b, bwd, op.operands))


def _used_functions(expander: Expander, roots=None) -> set:
    """The functions `roots` (default: the public ones) reach through symbol references."""
    return reachable_functions(expander.fns.table, roots)


__all__ = ["KEEP", "Expander", "ExpandRule", "lower_custom_calls"]
