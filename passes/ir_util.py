"""Generic IR helpers every pass shares: module and function lookup, cloning, replacing.

    fns = FunctionTable(module)          # @name -> func.func, signatures, new functions
    fn = fns.get("f", where=op)          # PassError at `op` if there is no @f
    new = clone_into(op, ip, mapping)    # a copy of `op` (regions too), operands remapped
    replace_op(op, new_values)           # uses of op's results -> new_values; op erased
    callee_of(op)                        # "f" for func.call / jaxpr.call @f / jaxpr.jvp @f
    dependent_results(fn, (0,))          # which results of fn depend on argument 0
    reachable_functions(fns.table)       # the functions the public ones use

Ops may carry regions (control flow: `jaxpr.cond`, `jaxpr.while`, `jaxpr.scan`); each
helper here treats a region's ops as part of the op that holds them.
"""
from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func as func_d

from mjax.dialect.core import OPS, JaxprOp
from mjax.dialect.ops import transforms as T
from mjax.dialect.symbols import (functions, is_private, main_function, module_body,
                                  symbol_name)
from mjax.dialect.types import tensor_type
from mjax.passes.registry import PassError

# Ops that end a block and hand its results to the enclosing op (also any
# `<dialect>.yield` / `<dialect>.return`: unregistered ops cannot declare themselves
# terminators).
TERMINATORS = frozenset({"func.return", "jaxpr.yield"})


def is_terminator(op: ir.Operation) -> bool:
    name = op.operation.name
    return name in TERMINATORS or name.endswith((".yield", ".return"))


def entry_block(fn: ir.Operation) -> ir.Block:
    return fn.regions[0].blocks[0]


def callee_of(op: ir.Operation) -> str | None:
    """The function a call-like op (func.call, jaxpr.call, jaxpr.jvp, ...) names, if any."""
    name = op.name     # (read once: the passes ask this of every op they walk)
    if name == "func.call" or (name.startswith("jaxpr.") and "callee" in op.attributes):
        return ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    return None


def calls_before(op: ir.Operation, callee: str, operands) -> list[ir.Operation]:
    """The `jaxpr.call @callee(operands)` ops before `op` in its block, in order (grad's
    and value_and_grad's primal call beside their `jaxpr.vjp`)."""
    operands = list(operands)
    found = []
    for other in op.operation.block.operations:
        if other == op.operation:
            return found
        view = other.opview
        if (isinstance(view, T.CallOp) and str(view.params["callee"]) == callee
                and list(other.operands) == operands):
            found.append(other)
    return found


def nested_ops(op: ir.Operation) -> list[ir.Operation]:
    """The ops inside `op`'s regions (or an ir.Module's), at any depth (pre-order), not
    `op` itself; a list, safe to mutate the IR over."""
    ops = []
    append, advance = ops.append, ir.WalkResult.ADVANCE   # (locals: one call per op)

    def visit(inner):
        append(inner)
        return advance
    op.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    del ops[0]
    return ops


def child_ops(root) -> list[ir.Operation]:
    """The ops of the blocks of `root`'s regions, in order, not the ops inside them (a
    list, safe to mutate the IR over): one walk skipping every op's regions but root's,
    cheaper than listing `block.operations`, which makes an OpView of each op."""
    ops = []
    append = ops.append
    advance, skip = ir.WalkResult.ADVANCE, ir.WalkResult.SKIP
    first = [True]

    def visit(op):
        if first[0]:            # (root itself: into its regions)
            first[0] = False
            return advance
        append(op)
        return skip
    root.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return ops


# ---- symbol references ------------------------------------------------------------------
# Attributes that may hold symbol references other than a plain @name, and the symbols
# each names: attributes are uniqued, and the same few arrays recur (dot_general's
# dimension_numbers), so each is looked into once.
_NESTING = (ir.ArrayAttr, ir.DictAttr, ir.SymbolRefAttr)
# The mark of a vjp's forward part under a trace: copies of the traced function and its
# callees (mjax.ad.linear_split), each holding the original's name; forward mode
# differentiates their custom_vjp calls by the fwd rules (passes/forward_mode.py).
# Functions derived from a marked one (batched, ...) keep the mark, with no name.
VJP_FORWARD = "mjax.vjp_forward"
# The mark of a user's `jaxpr.jvp` that a differentiation enclosing it perturbs (its
# custom_vjp calls then raise JAX's NotImplementedError for custom_lin).
OUTER_PERTURBED = "mjax.outer_perturbed"


def mark_outer_perturbed(op) -> None:
    """Sets OUTER_PERTURBED on `op` (a user's jaxpr.jvp)."""
    op.attributes[OUTER_PERTURBED] = ir.UnitAttr.get()


# The mark of a derived function (passes/derived.py: what it was derived from, and how).
DERIVED_MARK = "mjax.derived"
_REFS_IN: dict = {}
_MAX_REFS_IN = 4096


def symbol_refs(attrs, out: set) -> set:
    """Adds to `out` the symbols the attributes `attrs` name, inside arrays and
    dictionaries too (a pallas_call's index maps); `@a::@b` names `a`. Returns `out`."""
    for a in attrs:
        if isinstance(a, ir.FlatSymbolRefAttr):
            out.add(a.value)
        elif isinstance(a, _NESTING):
            out.update(_refs_in(a))
    return out


def _refs_in(a: ir.Attribute) -> tuple[str, ...]:
    refs = _REFS_IN.get(a)
    if refs is None:
        found: set = set()
        if isinstance(a, ir.ArrayAttr):
            symbol_refs(a, found)
        elif isinstance(a, ir.DictAttr):
            symbol_refs([a[i].attr for i in range(len(a))], found)
        else:
            found.add(str(a).lstrip("@").split("::")[0].strip('"'))
        if len(_REFS_IN) >= _MAX_REFS_IN:
            _REFS_IN.clear()
        refs = _REFS_IN[a] = tuple(found)
    return refs


def referenced_symbols(root) -> set[str]:
    """Every symbol the attributes of `root` and the ops nested in it name."""
    names: set = set()

    def visit(op):
        # (values() lists the attributes ~3x faster than indexing NamedAttributes)
        symbol_refs(op.attributes.values(), names)
        return ir.WalkResult.ADVANCE
    root.operation.walk(visit)
    return names


def symbol_ref_counts(root) -> dict[str, int]:
    """How many attributes of `root` and the ops nested in it name each symbol (an array
    or dictionary attribute counts once per symbol it holds)."""
    counts: dict = {}

    def visit(op):
        count_symbol_refs(op.attributes.values(), counts)
        return ir.WalkResult.ADVANCE
    root.operation.walk(visit)
    return counts


def count_symbol_refs(attributes, counts: dict) -> None:
    """Adds to `counts` the symbols the attributes name (once per attribute holding one;
    an array or dictionary attribute once per symbol it holds)."""
    for a in attributes:
        if isinstance(a, ir.FlatSymbolRefAttr):
            name = a.value
            counts[name] = counts.get(name, 0) + 1
        elif isinstance(a, _NESTING):
            for name in _refs_in(a):
                counts[name] = counts.get(name, 0) + 1


def functions_text(module: ir.Module, roots) -> str:
    """A module, as text, holding the functions of `module` that `roots` (names) reach,
    them included: a copy of a traced function to parse into another module."""
    fns = {symbol_name(op): op.operation for op in module.body.operations
           if op.operation.name == "func.func"}
    names = reachable_functions(fns, roots)
    # (with the ops' locations: a copy names the user's lines in errors and in XLA's
    # metadata as the original does; an op printed alone writes them inline)
    return "module {\n" + "\n".join(fns[n].get_asm(enable_debug_info=True) for n in fns
                                     if n in names) + "\n}"


def reachable_functions(fns: dict[str, ir.Operation], roots=None) -> set[str]:
    """The names of the functions of `fns` (name -> func.func) that `roots` (default:
    the public ones) reach through symbol references (calls, transformation ops,
    pallas_call kernels and index maps), `roots` included."""
    todo = list(roots) if roots is not None else [
        name for name, fn in fns.items() if not is_private(fn)]
    seen = set(todo)
    flat, nesting = ir.FlatSymbolRefAttr, _NESTING
    while todo:
        refs: set = set()
        for op in nested_ops(fns[todo.pop()]):
            # (values() lists the attributes ~3x faster than indexing NamedAttributes;
            # the loop is symbol_refs inlined for the common case, a plain @name)
            for a in op.attributes.values():
                if isinstance(a, flat):
                    refs.add(a.value)
                elif isinstance(a, nesting):
                    refs.update(_refs_in(a))
        for name in refs:
            if name in fns and name not in seen:
                seen.add(name)
                todo.append(name)
    return seen


def clone_into(op: ir.Operation, ip: ir.InsertionPoint, mapping: dict) -> ir.Operation:
    """Clones `op` (with its regions) at `ip`, replacing operands per `mapping`; inside the
    regions too, for values a non-isolated region reads from outside."""
    op = op.operation
    new = op.clone(ip=ip)
    for i, v in enumerate(op.operands):
        if v in mapping:
            new.operands[i] = mapping[v]
    if len(new.regions):
        for inner in nested_ops(new):
            for i, v in enumerate(inner.operands):
                if v in mapping:
                    inner.operands[i] = mapping[v]
    return new


def replace_op(op: ir.Operation, values) -> None:
    """Replaces every use of `op`'s results by `values`, then erases `op`."""
    op = op.operation
    for old, new in zip(op.results, values, strict=True):
        old.replace_all_uses_with(new)
    op.erase()


def is_constant(v: ir.Value) -> bool:
    """Whether `v` is the result of a jaxpr.constant (cheap to rematerialize)."""
    owner = v.owner
    return not isinstance(owner, ir.Block) and owner.name == "jaxpr.constant"


def used_values(op: ir.Operation) -> list[ir.Value]:
    """`op`'s operands plus the outside values its regions read (if not isolated)."""
    used = list(op.operands)
    if len(op.regions):
        for inner in nested_ops(op):
            used.extend(inner.operands)
    return used


def has_effects(op: ir.Operation, _seen=None) -> bool:
    """Whether `op` may have side effects DCE and CSE must keep: an impure jaxpr op (a
    host callback with effects), or an op whose regions or callee contain one."""
    op = op.operation
    cls = OPS.get(op.name)    # (the op's class from its name: no OpView made)
    pure = cls.pure if cls is not None else True
    if type(pure) is not bool:   # (a property: purity read from the op's attributes)
        pure = op.opview.pure
    elif cls is None and op.name.startswith("jaxpr."):
        view = op.opview
        pure = not isinstance(view, JaxprOp) or view.pure
    if not pure and op.name != "jaxpr.yield":
        return True
    if len(op.regions) and any(has_effects(inner, _seen) for inner in nested_ops(op)):
        return True
    name = callee_of(op)
    if name is None:
        return False
    seen = set() if _seen is None else _seen
    if name in seen:
        return False
    seen.add(name)
    fn = function_named(op, name)
    return fn is not None and any(has_effects(inner, seen) for inner in nested_ops(fn))


def function_named(op: ir.Operation, name: str):
    """The func.func @name of the module enclosing `op` (None if not found)."""
    parent = op.parent
    while parent is not None and parent.name != "builtin.module":
        parent = parent.parent
    if parent is None:
        return None
    for f in parent.regions[0].blocks[0].operations:
        f = f.operation
        if f.name == "func.func" and symbol_name(f) == name:
            return f
    return None


def dependent_results(fn: ir.Operation, args) -> set[int]:
    """Indices of fn's results that depend (through its body) on the arguments `args`."""
    block = entry_block(fn)
    dep = {block.arguments[i] for i in args}
    for op in block.operations:
        op = op.operation
        if is_terminator(op):
            return {j for j, v in enumerate(op.operands) if v in dep}
        if any(v in dep for v in used_values(op)):
            dep.update(op.results)
    return set()


class FunctionTable:
    """The module's functions by name: lookup, signatures, and new private functions."""

    def __init__(self, module):
        self.module = module
        self.body = module_body(module)
        self.table: dict[str, ir.Operation] = functions(module)

    def __contains__(self, name) -> bool:
        return str(name) in self.table

    def get(self, name: str, where=None) -> ir.Operation:
        fn = self.table.get(str(name))
        if fn is None:
            raise PassError(where.location if where is not None else None,
                            f"no function named @{name} in the module")
        return fn

    def signature(self, name: str) -> T.Signature:
        fn = self.table.get(str(name))
        if fn is None:
            raise T.InferError(f"references @{name}, which is not a function in this module")
        return T.function_signature(fn)

    def fresh_name(self, base: str) -> str:
        name, k = base, 1
        while name in self.table:
            name, k = f"{base}_{k}", k + 1
        return name

    def create(self, name: str, in_avals, out_avals, after: ir.Operation):
        """A new private func.func @name right after `after`; returns (op, entry block).
        `out_avals=None` leaves the results to `set_results` once the body is built."""
        ins = [tensor_type(a) for a in in_avals]
        outs = [tensor_type(a) for a in out_avals or ()]
        with after.location:
            fn = func_d.FuncOp(name, (ins, outs), visibility="private",
                               ip=ir.InsertionPoint.after(after))
            # (what fn.add_entry_block() does, from the types at hand: it reads them
            # back from the function type)
            block = fn.regions[0].blocks.append(*ins)
        if VJP_FORWARD in after.attributes:
            fn.attributes[VJP_FORWARD] = ir.StringAttr.get("")
        self.table[name] = fn.operation
        return fn.operation, block

    def erase(self, name: str) -> None:
        self.table.pop(name).erase()


def forward_copy(fns: FunctionTable, name: str) -> str:
    """@name, or where it reaches a custom_vjp call, the name of a copy of it (and of the
    functions it reaches) marked VJP_FORWARD: what a vjp's primal outputs are computed by
    (a checkpoint's inside a linearization), so that a differentiation enclosing the vjp
    differentiates their custom_vjp calls through the fwd rules, as JAX's does (its vjp
    computes them by fwd). The copies hold their originals' names in the mark."""
    table = fns.table
    if VJP_FORWARD in table[name].attributes:
        return name
    names = reachable_functions(table, [name])
    if not any(op.name == T.CustomVjpCallOp.OPERATION_NAME
               for n in names for op in nested_ops(table[n])):
        return name
    k = 0
    while any(f"fwd{k}_{n}" in table for n in names):
        k += 1
    new = {n: f"fwd{k}_{n}" for n in names}
    for n in names:
        clone = table[n].clone(ip=ir.InsertionPoint.after(table[n]))
        clone.attributes["sym_name"] = ir.StringAttr.get(new[n])
        clone.attributes["sym_visibility"] = ir.StringAttr.get("private")
        clone.attributes[VJP_FORWARD] = ir.StringAttr.get(n)
        if DERIVED_MARK in clone.attributes:     # (a copy, not what the table derived)
            del clone.attributes[DERIVED_MARK]
        for old, renamed in new.items():
            ir.SymbolTable.replace_all_symbol_uses(old, renamed, clone)
        table[new[n]] = clone
    return new[name]


def set_results(fn: ir.Operation, values) -> None:
    """Terminates fn's entry block with `return values` and sets its result types."""
    block = entry_block(fn)
    # (func.ReturnOp's builder, without its generated wrapper's checks)
    ir.Operation.create("func.return", operands=list(values), loc=fn.location,
                        ip=ir.InsertionPoint(block))
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in block.arguments], [v.type for v in values]))


def is_zero_constant(v) -> bool:
    """Whether the value `v` is a constant zero: a zero splat constant, or a broadcast of
    one."""
    if not isinstance(v, ir.OpResult):
        return False
    owner = v.owner.operation
    if owner.name == "jaxpr.broadcast_in_dim":
        return is_zero_constant(owner.operands[0])
    if owner.name != "jaxpr.constant":
        return False
    attr = owner.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr) and \
            not ir.DenseElementsAttr.isinstance(attr):
        return False
    dense = ir.DenseElementsAttr(attr)
    if not dense.is_splat:          # (zeros are a splat: nothing is materialized here)
        return False
    splat = dense.get_splat_value()
    return isinstance(splat, (ir.FloatAttr, ir.IntegerAttr)) and splat.value == 0


__all__ = ["TERMINATORS", "FunctionTable", "is_terminator", "callee_of", "clone_into",
           "count_symbol_refs", "is_zero_constant",
           "function_named",
           "dependent_results", "entry_block", "functions", "has_effects", "is_constant",
           "is_private",
           "functions_text", "main_function", "module_body", "nested_ops",
           "reachable_functions", "referenced_symbols", "replace_op", "set_results",
           "symbol_name", "symbol_ref_counts", "symbol_refs", "used_values"]

