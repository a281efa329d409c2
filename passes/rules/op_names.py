"""Op names inside control flow, nested jits and checkpoints, as JAX's name stacks
spell them.

JAX names an op of a body after the control-flow op it sits in and the body's part, then
the scopes the op was traced under inside that body:

    scan        jit(f)/while/body/closed_call/sin      (the loop: jit(f)/while,
                                                        its counter: while/cond/lt and
                                                        while/body/add; steps left after
                                                        an unrolled loop: closed_call/sin)
    while_loop  jit(f)/while/cond/lt, jit(f)/while/body/sin
    cond/switch jit(f)/cond/branch_0_fun/cos            (branch i: the i-th function)

Names nest (`while/body/closed_call/transpose(jvp())/while/body/closed_call/dot_general`
for a scan under grad inside a scan). mjax's scopes are those of the whole trace (an op
in a body carries the scopes around the control-flow op too, and the transformations
applied to the function holding it), so lowering names a body's ops relative to their
control-flow op: the transformations and scopes that op carries are taken off
(`body_names`, applied as the lowering clones a body's ops).

XLA names a called function's ops under the call: a nested jit's `jit(f)/jit(g)/sin`
(`jvp(jit(g))/cos` under a transformation), a checkpoint's `jit(f)/checkpoint/sin`.
mjax inlines calls before lowering (passes/jaxpr_inline.py), naming the inlined ops so
(`name_inlined`; the frontend registers which functions are nested jits' and
checkpoints' with a `mjax.scope` attribute).

A scope is registered in `SCOPES` (location attribute -> path); `ORIGINAL` keeps, for
each location named for a body, the scope it had before (what its own body's ops are
relative to). Named locations are made once per (location, names) and cached.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

from jaxlib.mlir import ir

from mjax.passes.derived import SCOPE_ATTR   # (the frontend sets it on a nested jit)
from mjax.passes.ir_util import nested_ops

# As JAX does, each op of a jit's program is named after its primitive under the jit's
# name and the enclosing named_scopes ("jit(f)/scope/sin"). The prefix is set per run
# from the module's name (@jit_f); other modules' ops keep their locations.
OP_NAME_PREFIX: ContextVar = ContextVar("mjax_op_name_prefix", default=None)
# a jit's module name -> the function name JAX's op names give it (jit__lambda ->
# <lambda>: `jit(<lambda>)/sin`); frontend/tracing/lowering.py fills it as it names modules
JIT_NAMES: dict = {}
# location attribute -> the named_scope path it was traced under (source_info fills it)
SCOPES: dict = {}
# location attribute named by `body_names` -> the scope its op had before
ORIGINAL: dict = {}

# The names of transformations that wrap a scope in a name stack: `jvp(my_model)/conv`.
TRANSFORMS = frozenset({"jvp", "transpose", "vmap", "pmap", "shard_map"})
_BODY: dict = {}      # (outer scope, new outer path) -> {location attribute: location}
_CALLED: dict = {}    # (call's scope, callee's scope) -> {location attribute: location}
_MAX_CACHES = 1024
_AT: dict = {}        # (prefix, location attribute, path) -> named location
_MAX = 8192


def parse(scope: str) -> tuple[tuple, tuple]:
    """(transformations outermost first, scope path) of a name stack's text:
    `transpose(jvp(my_model))/conv` -> (("transpose", "jvp"), ("my_model", "conv"))."""
    if not scope:
        return (), ()
    head, sep, rest = scope.partition("/")
    transforms = []
    while head.endswith(")"):
        name, paren, inner = head.partition("(")
        if not paren or name not in TRANSFORMS:
            break
        transforms.append(name)
        head = inner[:-1]
    path = ([head] if head else []) + (rest.split("/") if sep else [])
    return tuple(transforms), tuple(path)


def render(transforms, path) -> str:
    """The text of a name stack: the transformations wrap the first scope."""
    if not transforms:
        return "/".join(path)
    head = path[0] if path else ""
    for t in reversed(transforms):
        head = f"{t}({head})"
    return "/".join((head, *path[1:]))


def relative(scope: str, outer: str) -> str:
    """`scope` with what it shares with `outer` (the scope of the control-flow op whose
    body holds it) taken off: the transformations applied to both and the scope path
    around the control-flow op."""
    if not outer:
        return scope
    t, p = parse(scope)
    ot, op_ = parse(outer)
    if t[:len(ot)] == ot:
        t = t[len(ot):]
    if p[:len(op_)] == op_:
        p = p[len(op_):]
    return render(t, p)


def body_names(op: ir.Operation, part: str):
    """The naming of the ops of a body of the control-flow op `op` as sitting in its
    `part` ("while/body/closed_call"): a function from a body op's location to its
    named one (False: kept), which the lowering applies to the ops it clones out of the
    body; None outside a jit's program (as mjax-opt lowers a module: locations stay)."""
    if OP_NAME_PREFIX.get() is None:
        return None
    attr = op.location.attr
    here = SCOPES.get(attr, "")
    outer = ORIGINAL.get(attr, here)
    path = f"{here}/{part}" if here else part
    cache = _cache(_BODY, (outer, path))

    def named(loc: ir.Location):
        key = loc.attr
        new = cache.get(key)
        if new is None:
            new = cache[key] = _make(loc, outer, path)
        return new
    return named


def _cache(caches: dict, key) -> dict:
    cache = caches.get(key)
    if cache is None:
        if len(caches) >= _MAX_CACHES:
            caches.clear()
        cache = caches[key] = {}
    elif len(cache) >= _MAX:
        cache.clear()
    return cache


def _make(loc: ir.Location, outer: str, path: str):
    if loc.attr in ORIGINAL:
        return False          # (already named as in its body)
    scope = SCOPES.get(loc.attr)
    if scope is not None:
        rel = relative(scope, outer)
        child = loc.child_loc if type(loc).__name__ == "NameLoc" else loc
    else:   # (a plain location, or one tagged otherwise (XLA metadata's): kept inside)
        scope, rel, child = "", "", loc
    name = f"{path}/{rel}" if rel else path
    new = ir.Location.name(name, childLoc=child, context=loc.context)
    SCOPES[new.attr] = name
    ORIGINAL[new.attr] = scope
    return new


def name_inlined(ops, call_loc: ir.Location, callee: ir.Operation, walk=True) -> None:
    """Names `ops` (and the ops in their bodies), just inlined from the function `callee`
    at a call at `call_loc`, under the call's scope, as XLA names a called function's
    ops in JAX's programs: a nested jit's under `jit(g)` (`outer/jit(g)/sin`,
    `vmap(jit(g))/sin`; a checkpoint's `checkpoint/sin`), then their scopes inside the
    function; a function's ops traced outside the transformations around the call (a
    custom_vjp's rules) under those (`jvp()/cos`, `transpose(jvp())/mul`)."""
    element = _callee_scope(callee)
    outer = SCOPES.get(call_loc.attr, "")
    if element is None and not outer:
        return
    t, p = parse(outer)
    cache = _cache(_CALLED, (outer, element))
    for op in ops:                  # (ir.Operations)
        inside = nested_ops(op) if walk and len(op.regions) else ()
        for inner in (op, *inside):
            loc = inner.location
            key = loc.attr
            new = cache.get(key)
            if new is None:
                new = cache[key] = _called(loc, outer, t, p, element)
            if new:
                inner.location = new


@contextmanager
def callee_named(fn: ir.Operation, call_loc: ir.Location):
    """Names the ops of the function `fn` as `name_inlined` names them inlined at a call
    at `call_loc`, while the block runs (a derivation inlining the callee's derivative
    copies their locations: jvp(jit(g))/cos); then gives them their locations back.
    Functions other than nested jits' and checkpoints' are left."""
    if _callee_scope(fn) is None:
        yield
        return
    ops = nested_ops(fn)
    old = [op.location for op in ops]
    name_inlined(ops, call_loc, fn, walk=False)
    try:
        yield
    finally:
        for op, loc in zip(ops, old):
            op.location = loc


def _called(loc: ir.Location, outer: str, t, p, element) -> ir.Location:
    scope = SCOPES.get(loc.attr)
    if scope is not None:
        rt, rp = parse(relative(scope, outer))
        child = loc.child_loc if type(loc).__name__ == "NameLoc" else loc
    else:
        rt, rp, child = (), (), loc
    path = (*p, element) if element else p
    if path:
        rel = render(rt, rp)
        name = render(t, path) + (f"/{rel}" if rel else "")
    else:           # (the call's transformations wrap the function's first scope)
        name = render(t + rt, rp)
    if not name:
        return False
    new = ir.Location.name(name, childLoc=child, context=loc.context)
    SCOPES[new.attr] = name
    return new


def _callee_scope(fn: ir.Operation):
    """The scope of the nested jit or checkpoint `fn` was traced for (or derived from: a
    batched copy of g is g's too, passes/derived.py copies the attribute), else None."""
    attrs = fn.attributes
    return ir.StringAttr(attrs[SCOPE_ATTR]).value if SCOPE_ATTR in attrs else None


def note_callee(module: ir.Module, symbol: str, scope: str) -> None:
    """Marks the function `symbol` of `module` as a nested jit's or a checkpoint's
    (`scope`: `jit(g)`, `checkpoint`)."""
    with module.context:
        fn = ir.SymbolTable(module.operation)[symbol]
        fn.attributes[SCOPE_ATTR] = ir.StringAttr.get(scope)


def named_at(loc: ir.Location, path: str) -> ir.Location:
    """The location an op a lowering rule emits gets when JAX names it `path` under the
    scope of the op at `loc` (`while`, `while/cond/lt`); `loc` itself outside a jit's
    program."""
    prefix = OP_NAME_PREFIX.get()
    if prefix is None:
        return loc
    key = (prefix, loc.attr, path)
    hit = _AT.get(key)
    if hit is None:
        here = SCOPES.get(loc.attr)
        name = f"{prefix}{here}/{path}" if here else f"{prefix}{path}"
        hit = ir.Location.name(name, childLoc=loc, context=loc.context)
        if len(_AT) >= _MAX:
            _AT.clear()
        _AT[key] = hit
    return hit
