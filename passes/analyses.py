"""Facts about a module that several passes ask for, found once and kept while they hold
(MLIR's analysis manager, in small).

    op_names(module)      # the names of the ops it may hold: a pass whose ops are not
                          # among them has nothing to do and skips its walk
    known_live(module)    # True: no pure op of it is dead (--jaxpr-dce has no work)
    preserve(module, names=True, live=True)   # in a pass: the facts still hold after it

`op_names` is a superset: a pass that only erases, moves or copies ops keeps it true.
The facts come from the tracer (`Census`: what a trace staged, when that is every op of
the module), or `op_names` walks the module once. They are trusted inside `run_pipeline`
only, where each pass either declares what it keeps (`preserve`, e.g. when it changed
nothing) or the facts are forgotten after it; a pipeline forgets them all when it ends.
Between the tracer and the pipeline they are kept with the module's shape (its top-level
ops and how many ops each of their blocks holds) and dropped when the pipeline's first
pass finds that changed. A module read from text has none: the first pass that asks
walks it.
"""
from __future__ import annotations

import threading
import weakref

from jaxlib.mlir import ir

# id(ir.Module) -> (a weak reference to it, its _Facts): the tracer's, a clone's copy, or
# found during a pipeline. (Not a WeakKeyDictionary: a module's hash follows its contents.)
_FACTS: dict = {}


def _get(module):
    entry = _FACTS.get(id(module))
    return entry[1] if entry is not None and entry[0]() is module else None


def _put(module, facts) -> None:
    key = id(module)
    entry = _FACTS.get(key)
    if entry is None or entry[0]() is not module:
        entry = (weakref.ref(module, lambda ref: _gone(key, ref)), None)
    _FACTS[key] = (entry[0], facts)


def _gone(key: int, ref) -> None:
    entry = _FACTS.get(key)
    if entry is not None and entry[0] is ref:
        del _FACTS[key]


def forget(module) -> None:
    """Drops every fact kept for `module` (a pipeline's end)."""
    if _get(module) is not None:
        del _FACTS[id(module)]


class _Facts:
    __slots__ = ("shape", "names", "live")

    def __init__(self, shape, names=None, live=None):
        self.shape = shape
        self.names = names        # frozenset of op names (a superset), or None: unknown
        self.live = live          # True: no dead pure op; None: unknown


class _Pipelines(threading.local):
    def __init__(self):
        # one [module, kept kinds] per pass running in a pipeline (pipelines nest)
        self.running: list = []


_state = _Pipelines()


def module_shape(module: ir.Module) -> tuple:
    """The names of `module`'s top-level ops and how many ops each of their blocks
    holds (a cheap check that the module was not changed behind a fact's back)."""
    shape = []
    for op in module.body.operations:
        op = op.operation
        shape.append(op.name)
        for region in op.regions:
            for block in region.blocks:
                shape.append(len(block.operations))
    return tuple(shape)


def _facts(module) -> _Facts | None:
    facts = _get(module)
    if facts is not None and facts.shape != module_shape(module):
        forget(module)
        return None
    return facts


def _in_pipeline(module) -> bool:
    running = _state.running
    return bool(running) and running[-1][0] is module


def walk_op_names(module) -> frozenset:
    """The names of the ops of `module` (or of any op) at any depth, its own included."""
    names: set = set()
    add, advance = names.add, ir.WalkResult.ADVANCE

    def visit(op):
        add(op.name)
        return advance
    module.operation.walk(visit)
    return frozenset(names)


def op_names(module: ir.Module) -> frozenset:
    """The names of the ops `module` may hold (no op of another name is in it). Inside a
    pipeline, found once and shared by its passes; outside, a walk (and the facts kept
    for the module are forgotten: the caller may be a pass about to change it)."""
    if not _in_pipeline(module):
        forget(module)
        return walk_op_names(module)
    facts = _get(module)    # (checked against the shape when the pass began)
    if facts is not None and facts.names is not None:
        return facts.names
    names = walk_op_names(module)
    if facts is None:
        _put(module, _Facts(None, names))
    else:
        facts.names = names
    return names


def pipeline_op_names(module: ir.Module) -> frozenset | None:
    """op_names inside a pipeline (found once, shared by its passes); None outside one,
    where finding them would cost a walk."""
    return op_names(module) if _in_pipeline(module) else None


def recorded_op_names(module: ir.Module) -> frozenset | None:
    """op_names the tracer (or a pipeline) left for `module`, still true; else None.
    For readers that change nothing (jit's look for sharding constraints)."""
    facts = _facts(module)
    return facts.names if facts is not None else None


def known_live(module: ir.Module) -> bool:
    """Whether `module` is known (inside a pipeline) to hold no dead pure op."""
    if not _in_pipeline(module):
        return False
    facts = _get(module)
    return facts is not None and facts.live is True


def preserve(module: ir.Module, names: bool = True, live: bool = True) -> None:
    """Called by a pass: after it, `module`'s op names (a superset) and its having no
    dead op still hold where given (a pass that changed nothing keeps both)."""
    running = _state.running
    if running and running[-1][0] is module:
        kept = running[-1][1]
        if names:
            kept.add("names")
        if live:
            kept.add("live")


def establish_live(module: ir.Module) -> None:
    """Called by --jaxpr-dce, which leaves no dead pure op and only erases: `known_live`
    from now on (inside the pipeline), and the op names kept."""
    if not _in_pipeline(module):
        return
    _facts_of(module).live = True
    preserve(module)


def establish_names(module: ir.Module, names) -> None:
    """Called by a pass that knows a superset of the names of the ops it leaves
    (--jaxpr-expand-transforms, where no rule could emit an impure op): `op_names` from
    now on (inside the pipeline), without a walk; no dead op is known absent."""
    if not _in_pipeline(module):
        return
    facts = _facts_of(module)
    facts.names = frozenset(names)
    facts.live = None
    preserve(module, live=False)


def _facts_of(module: ir.Module) -> "_Facts":
    """The module's facts, made (knowing nothing) if it has none yet."""
    facts = _get(module)
    if facts is None:
        facts = _Facts(None)
        _put(module, facts)
    return facts


def record(module: ir.Module, names, live: bool) -> None:
    """The tracer's facts for the module it built (its every op staged by the trace)."""
    _put(module, _Facts(module_shape(module), frozenset(names), live or None))


def copy_facts(source: ir.Module, clone: ir.Module) -> None:
    """`clone` (an exact copy of `source`) gets `source`'s facts, if still true."""
    facts = _facts(source)
    if facts is not None:
        _put(clone, _Facts(facts.shape, facts.names, facts.live))


def begin_pass(module) -> None:
    """Before a pass in a pipeline: facts the tracer or a clone left for `module` are
    checked against its shape (it may have changed since); from then on the pipeline's
    passes keep them up to date (shape None: trusted until the pipeline ends)."""
    facts = _get(module)
    if facts is not None and facts.shape is not None:
        if facts.shape != module_shape(module):
            forget(module)
        else:
            facts.shape = None
    _state.running.append([module, set()])


def end_pass(module, failed: bool = False) -> None:
    """After a pass in a pipeline: the facts it did not keep are forgotten (all of them
    if it failed)."""
    _, kept = _state.running.pop()
    facts = _get(module)
    if facts is None:
        return
    if failed or not kept:
        forget(module)
        return
    if "names" not in kept:
        facts.names = None
    if "live" not in kept:
        facts.live = None
    if facts.names is None and facts.live is None:
        forget(module)


_AROUND = frozenset({"builtin.module", "func.func", "func.return"})   # (not staged ops)


class Census:
    """What a trace staged into its block, op by op: the ops' names, how many, and the
    results not used since; `record_for` turns it into the module's facts when the block
    holds exactly those ops (plus its return) and none holds regions."""

    __slots__ = ("names", "count", "unused", "flat")

    def __init__(self):
        self.names: set = set()
        self.count = 0
        # id(result) -> the result (kept alive, so ids stay unique), or for an op of
        # several results (result, the ids of all of them): the results used by nothing
        # staged yet
        self.unused: dict = {}
        self.flat = True

    def staged(self, opcls, operands, results) -> None:
        """`opcls`'s op was staged on the values `operands`, giving `results`."""
        unused = self.unused
        for v in operands:
            unused.pop(id(v), None)
        self.count += 1
        self.names.add(opcls.OPERATION_NAME)
        if opcls.num_regions:
            self.flat = False
        if len(results) == 1:
            r = results[0]
            unused[id(r)] = r
        elif results:
            ids = tuple(map(id, results))
            for r in results:
                unused[id(r)] = (r, ids)

    def returned(self, values) -> None:
        unused = self.unused
        for v in values:
            unused.pop(id(v), None)

    def all_used(self) -> bool:
        """Whether every staged op has a result something staged (or returned) uses."""
        unused = self.unused
        for entry in unused.values():
            if type(entry) is not tuple or all(i in unused for i in entry[1]):
                return False
        return True

    def record_for(self, module: ir.Module, block: ir.Block) -> None:
        """Records the facts of `module` if its one function's `block` holds just the
        staged ops and their return (an op staged any other way, or a region, and
        nothing is recorded)."""
        if not self.flat or len(block.operations) != self.count + 1 or \
                len(module.body.operations) != 1:
            return
        record(module, self.names | _AROUND, self.all_used())


__all__ = ["Census", "copy_facts", "establish_live", "known_live", "op_names", "preserve",
           "recorded_op_names", "record", "walk_op_names"]
