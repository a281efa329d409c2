"""Custom derivative rules traced on demand (JAX traces custom_jvp/custom_vjp rules only
when a differentiation needs them).

A `custom_jvp_call` / `custom_vjp_call` names its rules either as functions of the module
(`jvp = @g`, `fwd = @a`, `bwd = @b`) or, when they have not been traced, by a handle,
`rule = "f_jvp#3"`, into this process's registry of rule sources:

    handle = register(source, "f_jvp")       # the frontend, when it stages the call
    name = rule_function(ex, op, "jvp")      # a pass that needs the rule: @g

A source is the frontend's record of one staged call (its Python rules, static
arguments, argument structure and types, closed-over values); `source.trace(module,
part)` traces the rule `part` ("jvp", "fwd" or "bwd") into the module and returns the
new function's name, with the op's calling convention (dialect/ops/transforms.py). A
traced rule carries `mjax.custom_rule = "<handle>/<part>"`, so each module traces a rule
once and functions traced while staging (JAX's order of side effects) are found again.

Transformations that move a call elsewhere before its rules are traced derive a new
handle instead of tracing (`derive`): vmap batches the rules of `handle` once they are
traced (passes/batching.py). A handle read from text in another process resolves to
nothing: the pass needing the rule fails at the op, naming it.
"""
from __future__ import annotations

import collections
import contextlib
import itertools
import threading

from jaxlib.mlir import ir

from mjax.passes.ir_util import functions
from mjax.passes.registry import op_error

MARK = "mjax.custom_rule"

# handle -> source, least recently used first. The sources keep the Python rules (and the
# values they close over) alive, so that IR staged now can be differentiated later (an
# eager vjp's pullback, a Lowered compiled later). The registry is bounded; sources that
# hold tracers (hence their traces' modules) are grouped by the module being traced and
# kept for the most recent modules only, all of a module's together.
_ENTRIES: "collections.OrderedDict[str, object]" = collections.OrderedDict()
_GROUPS: "collections.OrderedDict[object, list]" = collections.OrderedDict()
MAX_SOURCES, MAX_GROUPS = 16384, 16
_ids = itertools.count()
_lock = threading.Lock()


class _Runs(threading.local):
    """How many times this thread's passes traced a Python rule (materialize,
    user_batching): a compiled program whose lowering did so is not reused as is, since
    JAX runs those rules at every call (mjax.ad.staging)."""
    count = 0


_runs = _Runs()


def rule_runs() -> int:
    """The count `_Runs` keeps for this thread."""
    return _runs.count


def register(source, name: str, group=None) -> str:
    """A new handle for `source` (named after its rule, `name`); `group` (for sources
    holding tracers): what they hold alive, the module being traced."""
    with _lock:
        handle = f"{name}#{next(_ids)}"
        _ENTRIES[handle] = source
        if group is not None:
            _GROUPS.setdefault(group, []).append(handle)
            _GROUPS.move_to_end(group)
            while len(_GROUPS) > MAX_GROUPS:
                for old in _GROUPS.popitem(last=False)[1]:
                    _drop(old)
        while len(_ENTRIES) > MAX_SOURCES:
            _drop(next(iter(_ENTRIES)))
    return handle


def _drop(handle: str) -> None:
    """Forgets `handle` and the handles derived from it."""
    for key in [k for k in _ENTRIES if k == handle or k.startswith(handle + "|")]:
        del _ENTRIES[key]


def sources() -> list:
    """Every source registered now (what they hold is mjax's record of a staged call, not
    a leak: mjax.tracing.leak_check)."""
    with _lock:
        return list(_ENTRIES.values())


def source_of(handle: str):
    """The source behind `handle` (None if unknown), marked as recently used."""
    with _lock:
        source = _ENTRIES.get(handle)
        if source is not None:
            _ENTRIES.move_to_end(handle)
        return source


def custom_of(op):
    """The Python custom function (custom_jvp / custom_vjp object) behind a custom call's
    rule handle, or None (no handle, or one unknown here: IR read from text)."""
    if "rule" not in op.attributes:
        return None
    return getattr(source_of(str(op.opview.params.get("rule") or "")), "custom", None)


def custom_attribute(op, name: str, default=None):
    """An attribute of the Python custom function behind a custom call's rule handle
    (a hijax primitive's: mjax.experimental.hijax_vjp), or `default`."""
    return getattr(custom_of(op), name, default)


def has_jvp_rule(op) -> bool:
    """Whether a custom_vjp call's Python rules also trace a "jvp" part (a hijax
    primitive defining both its VJP and its JVP: forward mode then uses the JVP)."""
    return bool(custom_attribute(op, "has_jvp_rule", False))


class _Emulated(threading.local):
    """The mesh axes whose vmaps this thread's passes batch only to run a shard_map called
    outside jit (mjax.spmd.shard_map runs its body vmapped over the mesh axes)."""
    names: frozenset = frozenset()


_emulated = _Emulated()


@contextlib.contextmanager
def emulating_shard_map(axis_names):
    """While it is open, a vmap over one of `axis_names` batches custom calls as any
    other: JAX's shard_map outside jit runs the body per device and never calls a
    primitive's `batch` (or a custom_vmap rule), so neither does mjax's emulation."""
    before = _emulated.names
    _emulated.names = before | frozenset(axis_names)
    try:
        yield
    finally:
        _emulated.names = before


def user_batching(ex, op, dims, axis_size: int, axis_name) -> tuple | None:
    """(function, result dims) a custom call's own Python batching rule (a hijax
    primitive's `batch`, a custom_vmap rule) traces for its operands batched at `dims`
    (0 or None each): each result batched at 0, or unbatched (None) where the rule says
    so; None when the call has no such rule. The tracer returns the function's name
    (every result at 0) or (name, result dims)."""
    tracer = custom_attribute(op, "batch_tracer")
    if tracer is None or (axis_name is not None and axis_name in _emulated.names):
        return None
    source = source_of(str(op.opview.params.get("rule") or ""))
    before = set(ex.fns.table)
    ex.traced_rules = True     # (lower_custom_calls looks into what it traces)
    _runs.count += 1
    got = tracer(source, ex.module, dims, axis_size, axis_name)
    if got is None:
        return None
    name, out_dims = got if isinstance(got, tuple) else (got, None)
    for fn_name, fn in functions(ex.module).items():
        if fn_name not in before:
            ex.fns.table[fn_name] = fn
    ex.expand_function(name)
    if out_dims is None:
        out_dims = [0] * len(ex.fns.signature(name)[1])
    return name, list(out_dims)


ZERO_RESULTS = "mjax.symbolic_zero_tangents"


def mark_symbolic_zero_results(fn: ir.Operation, results) -> None:
    """Records on a traced jvp rule that it gave the tangents of `results` (indices of the
    custom function's results) as symbolic zeros: its derivative pass keeps them zero."""
    if results:
        fn.attributes[ZERO_RESULTS] = ir.DenseI64ArrayAttr.get(sorted(results))


def symbolic_zero_results(fn: ir.Operation) -> frozenset:
    """The results `mark_symbolic_zero_results` recorded on `fn`."""
    if ZERO_RESULTS not in fn.attributes:
        return frozenset()
    return frozenset(ir.DenseI64ArrayAttr(fn.attributes[ZERO_RESULTS]))


def rule_part(kind: str, zeros=None) -> str:
    """The part naming rule `kind` traced with symbolic zero tangents: "jvp:0,2" is the
    jvp rule with no tangents for inputs 0 and 2, "bwd:1" the bwd rule with a zero
    cotangent operand 1 (a rule defined with symbolic_zeros=True sees SymbolicZero
    objects there); "jvp" has none."""
    if not zeros:
        return kind
    return f"{kind}:" + ",".join(str(k) for k in zeros)


def bwd_part(zero_cotangents=None) -> str:
    """The part of a `custom_vjp_bwd` op's rule."""
    return rule_part("bwd", zero_cotangents)


def split_part(part: str) -> tuple[str, tuple]:
    """(rule kind, indices of the symbolic zeros) of a part name (`rule_part`); a user
    primitive's parts ("batch:0,n:2", passes/user_primitives.py) have no zeros."""
    kind, _, zeros = part.partition(":")
    if not zeros or kind not in ("jvp", "fwd", "bwd"):
        return kind, ()
    return kind, tuple(int(k) for k in zeros.split(","))


def rule_function(ex, op, part: str, zeros=()) -> str:
    """The function `op` (a custom call) uses as its rule `part` ("jvp", "fwd", "bwd"):
    the symbol it names, else the one traced for its handle (now, if not yet), with
    symbolic zeros at `zeros` (`rule_part`)."""
    params = op.opview.params
    sym = params.get(part)
    if sym is not None:
        return str(sym)
    return materialize(ex, params["rule"], rule_part(part, zeros), op)


def materialize(ex, handle: str, part: str, where) -> str:
    """The function traced for rule `part` of `handle` in ex's module (traced now if the
    module has none), with its transformation ops expanded."""
    found = _traced(ex).get((handle, part))
    if found is not None and found in ex.fns:
        return found
    source = source_of(handle)
    if source is None:
        raise op_error(where, f"has no {part} rule: its rule handle {handle!r} names no "
                              f"Python rule in this process (rules staged by another "
                              f"process, or IR read from text, cannot be traced; name the "
                              f"rule as a function of the module, {part} = @...; or it "
                              f"was staged longer ago than the registry remembers)")
    ex.traced_rules = True     # (lower_custom_calls looks into what it traces)
    _runs.count += 1
    if hasattr(source, "trace"):        # the frontend's record: trace the Python rule
        before = set(ex.fns.table)
        name = source.trace(ex.module, part)
        for fn_name, fn in functions(ex.module).items():
            if fn_name not in before:
                ex.fns.table[fn_name] = fn
    else:                               # derived from another handle by a pass
        name = source.materialize(ex, part, where)
    mark(ex.fns.get(name), handle, part)
    _traced(ex)[(handle, part)] = name
    ex.expand_function(name)
    return name


def mark(fn: ir.Operation, handle: str, part: str) -> None:
    """Records on `fn` that it is rule `part` of `handle`."""
    fn.attributes[MARK] = ir.StringAttr.get(f"{handle}/{part}")


def marked(fn: ir.Operation) -> tuple[str, str] | None:
    """(handle, part) that `mark` recorded on `fn`, or None for any other function."""
    if MARK not in fn.attributes:
        return None
    handle, _, part = ir.StringAttr(fn.attributes[MARK]).value.rpartition("/")
    return handle, part


def _traced(ex) -> dict:
    """(handle, part) -> function, for the rules already in ex's module."""
    table = ex.state.get("custom_rules")
    if table is None:
        table = ex.state["custom_rules"] = {}
        for name, fn in ex.fns.table.items():
            found = marked(fn)
            if found is not None:
                table.setdefault(found, name)
    return table


# ---- derived handles ------------------------------------------------------------------------
def derive(base: str, key: str, make) -> str:
    """The handle `key` of rules a pass derives from `base`'s without tracing them (vmap
    batching them: passes/batching.py). `make()` gives its source, whose
    `materialize(ex, part, where)` builds rule `part` from `base`'s rule when a pass needs
    it. An unknown `base` gives `key` unregistered: it fails, naming the op, when traced."""
    with _lock:
        if key not in _ENTRIES:
            if base not in _ENTRIES:
                return key
            _ENTRIES[key] = make()
    return key


__all__ = ["MARK", "custom_attribute", "derive", "emulating_shard_map", "has_jvp_rule",
           "mark", "materialize", "register", "rule_function", "rule_runs", "source_of",
           "user_batching"]
