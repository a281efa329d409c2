"""`--jaxpr-verify`: check the IR's structure, then every `jaxpr.*` op against its definition.

Structure first: MLIR's own verifier (dominance, terminators of registered ops, symbol
uses of `func.call`), then what it cannot see in `jaxpr` ops, which are unregistered (MLIR
treats their regions as graph regions without dominance): a function body ends with a
return; a body region of a `jaxpr` op has one block ending in `jaxpr.yield`, uses no value
defined outside it (regions are isolated from above) and no value before its definition.
Then per op, at any depth: operand count, attribute kinds, region count, and the result
types the op's own `infer` rule gives. Unknown `jaxpr.*` ops are errors. Last, the calls:
a function an op runs (`callee`) has a body, and no function runs itself (a traced
program never recurses). Every pass may rely on all of this: `mjax-opt` runs this pass
on its input, whatever the flags, and after each pass.

    %0 = "jaxpr.sin"(%x) : (tensor<3xi32>) -> tensor<3xi32>
  ==>
    error: 'jaxpr.sin' op sin does not accept dtype i32 (operand must be ...)
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.types import aval_of, tensor_type
from mjax.passes.ir_util import nested_ops
from mjax.passes.registry import Pass, PassError, op_error, register_pass


def verify_op(op: ir.Operation) -> None:
    """Raises PassError if `op` (a jaxpr.* op) breaks its definition."""
    view = op.opview
    if not isinstance(view, JaxprOp):
        raise op_error(op, "is not a known jaxpr op")
    cls = type(view)
    if cls.num_regions is not None and len(op.regions) != cls.num_regions:
        raise op_error(op, f"expects {cls.num_regions} regions, got {len(op.regions)}")
    try:
        avals = [aval_of(v.type) for v in op.operands]
        raw = {}
        for name in op.attributes:
            if name not in cls.attributes:
                if name.startswith(("mjax.", "sdy.", "mhlo.")):
                    continue  # annotations other passes own
                raise TypeError(f"has unknown attribute '{name}'")
            try:
                raw[name] = A.decode(op.attributes[name])
            except TypeError as e:
                raise TypeError(f"attribute '{name}': {e}") from None
        params = cls.check_params(raw)
        infer_at = getattr(cls, "infer_at", None)
        if infer_at is not None:
            # Ops naming functions by symbol (jaxpr.call, jaxpr.jvp, ...): result types
            # come from the callee, looked up in the enclosing module.
            cls.check_operand_count(len(avals))
            expected = tuple(infer_at(op, avals, params))
        else:
            expected = cls.infer_checked(avals, params)
    except PassError:
        raise
    except (TypeError, ValueError) as e:
        msg = str(e)
        prefix = f"'{cls.OPERATION_NAME}' op "
        raise op_error(op, msg[len(prefix):] if msg.startswith(prefix) else msg) from None
    if len(expected) != len(op.results):
        raise op_error(op, f"expects {len(expected)} results, got {len(op.results)}")
    for i, (r, aval) in enumerate(zip(op.results, expected)):
        if r.type != tensor_type(aval):
            raise op_error(op, f"result {i} has type {r.type}, but the operands give "
                               f"{tensor_type(aval)}")


def verify_module(module) -> None:
    """MLIR's verifier (raises ir.MLIRError), then the structure of `jaxpr` ops, each
    op's definition and the calls between functions (raises PassError at the first
    problem)."""
    module.operation.verify()
    checker = _Checker()
    checker.regions(module.operation, None, None)
    _check_calls(module, checker.calls)


class _Checker:
    """One walk over the IR: structure, each jaxpr op, and the calls it sees."""

    def __init__(self):
        self.calls: list[tuple[str, str, ir.Operation]] = []   # (caller, callee, op)
        self.function = None     # the name of the func.func being walked

    def regions(self, op: ir.Operation, visible: set | None, owner) -> None:
        """Checks the ops in `op`'s regions. `owner` is the nearest enclosing jaxpr op
        with regions and `visible` the values its region has defined so far; None
        outside any (there MLIR's verifier has checked dominance)."""
        for region in op.regions:
            blocks = list(region.blocks)
            everywhere = []
            if visible is not None and len(blocks) > 1:
                # A registered op's multi-block region: its blocks may use each other's
                # values (MLIR checks their dominance); only the isolation is ours.
                everywhere = [v for b in blocks for v in _defined_in(b)]
                visible.update(everywhere)
            for block in blocks:
                self.block(block, visible, owner)
            if everywhere:
                visible.difference_update(everywhere)

    def block(self, block: ir.Block, visible: set | None, owner) -> None:
        ops = [o.operation for o in block.operations]
        parent = block.owner.operation if block.owner is not None else None
        if parent is not None and parent.name == "func.func":
            _check_function_end(parent, ops)
            self.function = ir.StringAttr(parent.attributes["sym_name"]).value
        if visible is not None:
            added = list(block.arguments)
            visible.update(added)
        for op in ops:
            if visible is not None:
                for i, v in enumerate(op.operands):
                    if v not in visible:
                        raise _unavailable(op, i, v, owner)
            is_jaxpr = op.name.startswith("jaxpr.")
            if is_jaxpr:
                verify_op(op)
                self._note_calls(op)
            if len(op.regions):
                if is_jaxpr:    # (verify_op checked: one block per region, ending in yield)
                    _check_yields(op)
                    self.regions(op, set(), op)   # isolated from above: a fresh scope
                else:
                    self.regions(op, visible, owner)
            if visible is not None:
                results = list(op.results)
                visible.update(results)
                added += results
        if visible is not None:
            visible.difference_update(added)

    def _note_calls(self, op: ir.Operation) -> None:
        if "callee" in op.attributes and self.function is not None:
            callee = op.attributes["callee"]
            if isinstance(callee, ir.FlatSymbolRefAttr):
                self.calls.append((self.function, callee.value, op))


def _defined_in(block: ir.Block) -> list:
    return [*block.arguments, *(r for o in block.operations for r in o.operation.results)]


def _check_calls(module, calls) -> None:
    """Every function a jaxpr op runs (its `callee`) has a body, and none runs itself,
    directly or through others (a traced program never recurses: its expansion and
    inlining would not end)."""
    if not calls:
        return
    table = ir.SymbolTable(module.operation)
    graph: dict[str, list] = {}
    for caller, callee, op in calls:
        try:
            fn = table[callee]
        except KeyError:
            continue            # (not a function: verify_op has said so for jaxpr ops)
        if fn.operation.name == "func.func" and not len(fn.regions[0].blocks):
            raise op_error(op, f"runs @{callee}, a declaration without a body")
        graph.setdefault(caller, []).append((callee, op))
    done: set[str] = set()
    for root in graph:
        # Depth first without recursion (call chains can be long): `path` holds the
        # functions being visited, each with its calls not yet followed.
        path, on_path = [(root, iter(graph[root]))], {root}
        while path:
            name, calls_left = path[-1]
            step = next(calls_left, None)
            if step is None:
                path.pop()
                on_path.discard(name)
                done.add(name)
                continue
            callee, op = step
            if callee in on_path:
                names = [n for n, _ in path]
                cycle = names[names.index(callee):] + [callee]
                raise op_error(op, f"makes @{callee} run itself ("
                                   + " -> ".join(f"@{n}" for n in cycle)
                                   + "): jaxpr functions cannot recurse")
            if callee not in done and callee in graph:
                path.append((callee, iter(graph[callee])))
                on_path.add(callee)


def _check_function_end(fn: ir.Operation, ops: list) -> None:
    # jaxpr ops are unregistered, and MLIR lets an unregistered op end a block.
    last = ops[-1] if ops else None
    if last is None or last.name.startswith("jaxpr."):
        name = ir.StringAttr(fn.attributes["sym_name"]).value
        ends = f"ends with '{last.name}'" if last is not None else "is empty"
        raise PassError(last if last is not None else fn,
                        f"'func.func' op @{name} does not end with a return: its body "
                        f"{ends}")


def _check_yields(op: ir.Operation) -> None:
    for region in op.regions:
        for inner in list(region.blocks[0].operations)[:-1]:
            if inner.operation.name == "jaxpr.yield":
                raise op_error(inner, f"must be the last op of its '{op.name}' region")


def _unavailable(op: ir.Operation, i: int, v: ir.Value, owner: ir.Operation) -> PassError:
    """The error for operand `i` of `op`, not defined before it in `owner`'s region."""
    defined = v.owner if isinstance(v.owner, ir.Block) else v.owner.operation.block
    block = op.block    # the blocks `op` is in, from its own out to `owner`'s region
    while block != defined:
        parent = block.owner.operation
        if parent == owner:
            break
        block = parent.block
    if block == defined:
        return op_error(op, f"operand #{i} is used before its definition")
    if _inside(defined, owner):
        return op_error(op, f"operand #{i} is defined in a region nested in this one, "
                            f"whose values are not visible here")
    return op_error(op, f"operand #{i} is defined outside the '{owner.name}' region that "
                        f"uses it: regions of jaxpr ops are isolated from above (a value "
                        f"a body closes over is an operand of the op)")


def _inside(block: ir.Block, op: ir.Operation) -> bool:
    node = block.owner
    while node is not None:
        node = node.operation
        if node == op:
            return True
        node = node.parent
    return False


@register_pass("jaxpr-verify")
class JaxprVerifyPass(Pass):
    """Check the IR's structure and every jaxpr op against its definition."""

    def run(self, module: ir.Module) -> None:
        verify_module(module)


__all__ = ["JaxprVerifyPass", "verify_module", "verify_op", "PassError"]
