"""`--jaxpr-inline`: inline `jaxpr.call` / `func.call` of private functions.

Upstream `inline` refuses to move unregistered ops, so mjax inlines itself. Public
functions are entry points and stay called; `jaxpr.checkpoint` is not inlined (its
boundary is what rematerialization keys on).

    func.func private @sq(%x: tensor<f32>) -> tensor<f32> {
      %0 = "jaxpr.mul"(%x, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    }
    func.func @main(%a: tensor<f32>) -> tensor<f32> {
      %0 = "jaxpr.call"(%a) {callee = @sq} : (tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    }
  ==>
    func.func @main(%a: tensor<f32>) -> tensor<f32> {
      %0 = "jaxpr.mul"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    }
    (@sq stays until --jaxpr-dce or symbol-dce removes it)

With `prune=true` (jit's pipeline) the pass first erases the private functions nothing
references (as --jaxpr-dce would after it), and a private function whose one reference
is the call being inlined has its body moved to the call instead of copied, and is
erased: the same module once --jaxpr-dce has run, without copying every op of a
value_and_grad's forward and backward parts or inlining into dead functions.
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir

from mjax.dialect.context import context
from mjax.passes import analyses
from mjax.passes.interpreter import Env, interpret
from mjax.dialect.symbols import module_body
from mjax.passes.ir_util import (FunctionTable, callee_of, child_ops, clone_into,
                                 count_symbol_refs, entry_block, functions, is_private,
                                 nested_ops, replace_op, symbol_ref_counts, symbol_name,
                                 symbol_refs)
from mjax.passes.registry import Pass, PassError, register_pass
from mjax.passes.rules.op_names import name_inlined

_CALLS = ("func.call", "jaxpr.call")
_CALLS_SET = frozenset(_CALLS)


class Inline:
    """The copying transformation: entries are new values; ops are cloned at `ip`, and
    with `fns`, calls are inlined recursively as well."""

    def __init__(self, ip: ir.InsertionPoint, fns: FunctionTable | None = None):
        self.ip = ip
        self.fns = fns
        self.made: list = []     # (the ops cloned at ip)

    def into(self, block: ir.Block) -> "Inline":
        return Inline(ir.InsertionPoint(block), self.fns)

    def run(self, block: ir.Block, args) -> list[ir.Value]:
        return interpret(block, self.rule_for, Env(zip(block.arguments, args)))

    def rule_for(self, op):
        if self.fns is not None and op.name in _CALLS and callee_of(op) in self.fns:
            return self._inline_call
        return self._copy

    def _copy(self, op, values):
        new = clone_into(op, self.ip, dict(zip(op.operands, values)))
        self.made.append(new)
        return list(new.results)

    def _inline_call(self, op, values):
        return self.run(entry_block(self.fns.get(callee_of(op), op)), values)


def inline_body(fns: FunctionTable, name: str, args, ip: ir.InsertionPoint) -> list[ir.Value]:
    """Copies @name's body at `ip` with `args` for its arguments (calls inside inlined
    too); returns the values it returns."""
    return Inline(ip, fns).run(entry_block(fns.get(name)), args)


def _has_private(module) -> bool:
    return any(op.operation.name == "func.func" and is_private(op.operation)
               for op in module_body(module).operations)


def inline_calls(module, max_rounds: int = 1000, prune: bool = False) -> int:
    """Inlines calls of private single-block functions until none is left; returns how
    many calls were inlined. `prune`: see the module docstring."""
    if prune and _has_private(module):
        # (without private functions nothing is pruned or moved: the plain walk is
        # cheaper than counting references)
        with context(), ir.Location.unknown(context()):
            return _Pruned(module).inline(max_rounds)
    count = 0
    with context(), ir.Location.unknown(context()):
        for _ in range(max_rounds):
            fns = functions(module)
            calls, calling = [], set()
            for name, fn in fns.items():
                for op in nested_ops(fn):
                    if op.name in _CALLS:
                        calling.add(name)
                        callee = fns.get(callee_of(op))
                        if (callee is not None and is_private(callee)
                                and len(callee.regions[0].blocks) == 1 and callee != fn):
                            calls.append((op, callee))
            if not calls:
                return count
            for call, callee in calls:
                _inline_copy(call, callee)
                count += 1
            # Only the bodies just copied can have brought new calls in (the calls not
            # inlined stay so, the functions being the same): without any, we are done.
            if not any(symbol_name(callee) in calling for _, callee in calls):
                return count
    raise PassError(None, "jaxpr-inline: calls still left after "
                          f"{max_rounds} rounds (recursive functions?)")


class _Pruned:
    """inline_calls with `prune`: symbol reference counts are kept per function (and per
    other top-level op), so a callee referenced once only is known without walking the
    module's attributes again after each inlining."""

    def __init__(self, module):
        self.fns: dict[str, ir.Operation] = {}
        self.held: dict = {}             # holder (a function's name, else the op) -> counts
        self.total: dict[str, int] = {}  # symbol -> references in the whole module
        self.into: dict[str, str] = {}   # a moved function -> the function it went into
        # A private function is walked for its references once something walked
        # references it: one no live op reaches (the function grad or vmap expanded,
        # in every such program) is erased unwalked, as counting would erase it (and so
        # is a cycle of private functions nothing else reaches).
        unwalked = {}
        # (the calls in each function walked, found by the walk that counts references:
        # the first round of `inline` looks for them without walking again)
        self.calls: dict | None = {}
        for op in module_body(module).operations:
            op = op.operation
            key = op
            if op.name == "func.func":
                key = symbol_name(op)
                self.fns[key] = op
                if is_private(op):
                    unwalked[key] = op
                    continue
                self._hold(key, self._walk(key, op))
                continue
            self._hold(key, symbol_ref_counts(op))
        # (the module's own attributes)
        self._hold(module, dict.fromkeys(symbol_refs(module.operation.attributes.values(),
                                                     set()), 1))
        while True:
            reached = [n for n in unwalked if self.total.get(n)]
            if not reached:
                break
            for name in reached:
                self._hold(name, self._walk(name, unwalked.pop(name)))
        for name in unwalked:
            self.held[name] = {}
        self._erase_dead()

    def _walk(self, name: str, fn: ir.Operation) -> dict[str, int]:
        """symbol_ref_counts(fn), noting the calls in `fn` (in pre-order, as
        nested_ops lists them) in `self.calls`."""
        counts: dict = {}
        calls = self.calls[name] = []
        call_names, advance = _CALLS_SET, ir.WalkResult.ADVANCE

        def visit(op):
            if op.name in call_names:
                calls.append(op)
            count_symbol_refs(op.attributes.values(), counts)
            return advance
        fn.walk(visit, ir.WalkOrder.PRE_ORDER)
        return counts

    def _hold(self, key, counts: dict, new: bool = True) -> None:
        """`key` holds the references `counts` too (`new`: more in the module; else
        moved from another holder)."""
        mine = self.held.setdefault(key, {})
        for name, n in counts.items():
            mine[name] = mine.get(name, 0) + n
            if new:
                self.total[name] = self.total.get(name, 0) + n

    def _drop(self, key, name: str) -> None:
        """One reference to `name` held by `key` is gone (an inlined call)."""
        self.held[key][name] -= 1
        self.total[name] -= 1

    def _erase_dead(self) -> None:
        while True:
            dead = [n for n, fn in self.fns.items()
                    if not self.total.get(n) and is_private(fn)]
            if not dead:
                return
            for name in dead:
                for sym, n in self.held.pop(name).items():
                    self.total[sym] -= n
                self.fns.pop(name).erase()

    def _holder(self, name: str) -> str:
        while name in self.into:
            name = self.into[name]
        return name

    def inline(self, max_rounds: int) -> int:
        count = 0
        for _ in range(max_rounds):
            calls, calling = [], set()
            found, self.calls = self.calls, None
            for name, fn in self.fns.items():
                ops = None if found is None else found.get(name)
                for op in (nested_ops(fn) if ops is None else ops):
                    if op.name in _CALLS:
                        calling.add(name)
                        callee_name = callee_of(op)
                        callee = self.fns.get(callee_name)
                        if (callee is not None and is_private(callee)
                                and len(callee.regions[0].blocks) == 1 and callee != fn):
                            calls.append((op, name, callee_name))
            if not calls:
                return count
            moved: dict | None = {} if found is not None else None   # call -> callee
            for call, caller, name in calls:
                caller = self._holder(caller)
                if name == caller:       # (recursion, through functions moved into it)
                    continue
                if self.total[name] == 1:     # this call is its only reference
                    _move_body(call, self.fns.pop(name))
                    self.into[name] = caller
                    self._hold(caller, self.held.pop(name), new=False)
                    if moved is not None and name in found:
                        moved[id(call)] = name    # (`found` holds it: ids stay unique)
                    else:
                        moved = None
                else:
                    _inline_copy(call, self.fns[name])
                    self._hold(caller, self.held[name])
                    moved = None      # (copied ops: their calls are found by a walk)
                self._drop(caller, name)
                count += 1
            if not any(name in calling for _, _, name in calls):
                return count
            if moved is not None:
                self.calls = _spliced(found, moved, self.fns)
        raise PassError(None, "jaxpr-inline: calls still left after "
                              f"{max_rounds} rounds (recursive functions?)")


def _spliced(found: dict, moved: dict, fns: dict) -> dict:
    """The calls in each function of `fns` (pre-order, as nested_ops lists them) after
    the calls in `moved` had their callees' bodies moved in their place: each such call
    is replaced by the calls `found` in its callee, so the next round of
    _Pruned.inline needs no walk (a function with no list in `found` is walked)."""
    def expand(ops):
        out = []
        for op in ops:
            name = moved.get(id(op))
            if name is None:
                out.append(op)
            else:
                out.extend(expand(found[name]))
        return out
    return {name: expand(found[name]) for name in fns if name in found}


def _inline_copy(call: ir.Operation, callee: ir.Operation) -> None:
    """Inlines `call` by copying the body of `callee` before it."""
    inline = Inline(ir.InsertionPoint(call))
    results = inline.run(entry_block(callee), list(call.operands))
    name_inlined(inline.made, call.location, callee)   # (jit(g)/sin)
    replace_op(call, results)


def _move_body(call: ir.Operation, callee: ir.Operation) -> None:
    """Inlines `call` by moving the body of `callee` (its only user) before it; erases
    `callee`."""
    block = entry_block(callee)
    ops = child_ops(callee)    # (as ir.Operations: listing block.operations makes OpViews)
    end = ops.pop()
    name_inlined(ops, call.location, callee)   # (jit(g)/sin)
    for op in ops:
        op.move_before(call)
    for arg, v in zip(block.arguments, list(call.operands)):
        arg.replace_all_uses_with(v)
    replace_op(call, list(end.operands))
    callee.erase()


@register_pass("jaxpr-inline")
@dataclass
class JaxprInlinePass(Pass):
    """Inline jaxpr.call/func.call of private functions (upstream inline refuses jaxpr ops)."""

    prune: bool = False

    def run(self, module: ir.Module) -> None:
        # No call in the module: nothing to inline (with prune, the unreferenced private
        # functions are still erased). Inlining copies, moves and erases ops, so the
        # op names stay a superset; an inlined body may leave dead ops.
        if _CALLS_SET.isdisjoint(analyses.op_names(module)) and not (
                self.prune and _has_private(module)):
            analyses.preserve(module)
            return
        analyses.preserve(module, live=inline_calls(module, prune=self.prune) == 0)
