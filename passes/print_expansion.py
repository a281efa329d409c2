"""The function make_jaxpr prints when the trace holds transformations: JAX's jaxprs show
grad, jvp and vmap already applied, mjax traces them as ops (`jaxpr.vjp @f`) and expands
them in passes. For printing, a copy of the module gets the same expansion the compile
pipeline runs, then the functions the expansion made (and the ones grad & co. staged)
are inlined and a cleanup close to what JAX's tracing leaves is applied:

  - identical pure equations are merged (grad's primal call and the forward part of its
    vjp compute the same values once, as JAX's linearization does);
  - the values a forward part computes beside the user's equations (residuals) come
    right after the equation they follow there, as JAX's linearization emits them;
  - dead equations are removed only when the expansion made them: the user's own
    equations stay even when unused (JAX prints them with `_` outputs).

    main: %y = jaxpr.call @f(%x); %g = jaxpr.vjp @f(%x, 1.0)
  ==>
    { lambda ; a:f32[]. let _:f32[] = sin a; b:f32[] = cos a; c:f32[] = mul 1.0 b in (c,) }

Calls the user staged with `jit` stay nested jits (their bodies cleaned the same way)
where the expansion did not rewrite them. None of this touches the module that is
compiled.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.attributes import decode
from mjax.dialect.context import context
from mjax.dialect.core import JaxprOp
from mjax.passes import custom_rules
from mjax.passes.autodiff import expand_transforms
from mjax.passes.derived import MARK
from mjax.passes.forward_mode import CustomVjpJvpError
from mjax.passes.ir_util import (VJP_FORWARD, callee_of, entry_block, has_effects,
                                 module_body, nested_ops, replace_op, symbol_name)
from mjax.passes.jaxpr_cse import mergeable
from mjax.passes.jaxpr_inline import Inline
from mjax.passes.module_edits import clone_module

# Discardable marks left on the printed copy (the printer skips `mjax.` attributes).
USER = "mjax.print_user_eqn"
FWD = "mjax.print_fwd_eqn"
SEED = "mjax.print_ct_seed"       # grad's cotangent seed (JAX reshards it)

# The mark of a forward part's shard_map (passes/shard_map_ad.py).
FORWARD_OF = "mjax.forward_of"
# Ops that ask for a transformation of the function they name.
_TRANSFORMS = frozenset({"jaxpr.jvp", "jaxpr.vjp", "jaxpr.linear_transpose", "jaxpr.vmap",
                         "jaxpr.checkpoint_tangent", "jaxpr.custom_vjp_tangent"})
# The equations of the user's trace and those of forward parts (linearize's `@f_fwd`)
# are marked (USER, FWD) while the copy is cleaned up, and grad's cotangent seeds
# (SEED: JAX reshards them in explicit mode); never printed: the printer skips `mjax.`
# attributes.


def expanded_function(module, name: str, before_expansion=None):
    """(copy of `module`, its function @name with transformations expanded), or None when
    the module holds no transformation op (the trace prints as it is).
    `before_expansion(original @name, its copy)`: called before the expansion runs (the
    frontend notes the cotangents' sharding types there: mjax.jaxpr.pretty_types)."""
    staged = {callee_of(op) for fn in module_body(module).operations
              for op in nested_ops(fn.operation) if op.name in _TRANSFORMS}
    if not staged:
        return None
    with context(), ir.Location.unknown(context()):
        try:      # (a forward part printed as the user's calls, where nothing needs it)
            copy, body, traced = _expanded_copy(module, name, before_expansion, True)
        except CustomVjpJvpError:
            copy, body, traced = _expanded_copy(module, name, before_expansion, False)
        fns = {symbol_name(f.operation): f.operation for f in body.operations
               if f.operation.name == "func.func"}
        # (Made by the expansion: also what grad expanded while tracing, a custom_vjp's
        # bwd rule deciding cotangent types, and the fwd/bwd rules its parts call.)
        made = {n for n in fns if n not in traced or n in staged or _derived(fns[n])}
        for n in made:
            if _is_forward_part(fns[n]):
                # Its copies of the user's equations (they carry the mark) repeat the
                # primal call's: they merge with those, or are dead duplicates to drop.
                for op in fns[n].regions[0].blocks[0].operations:
                    op.operation.attributes[FWD] = ir.UnitAttr.get()
                for op in nested_ops(fns[n]):
                    if USER in op.attributes:
                        del op.attributes[USER]
        for fn_name, fn in fns.items():   # (main and the user's nested jits)
            if fn_name not in made:
                _inline_calls(fn, fns, made)
                block = fn.regions[0].blocks[0]
                _merge_identical(block)
                _remove_dead(block)
    return copy, fns[name]


def _expanded_copy(module, name, before_expansion, originals: bool):
    """A copy of `module` with its transformations expanded, the user's equations marked;
    with `originals`, its vjps' forward parts (VJP_FORWARD copies) call the user's
    functions instead, as they print (a differentiation of them may then refuse)."""
    copy = clone_module(module)
    body = module_body(copy)
    traced, forward = set(), {}
    for fn in body.operations:
        traced.add(symbol_name(fn.operation))
        if VJP_FORWARD in fn.operation.attributes:
            forward[symbol_name(fn.operation)] = ir.StringAttr(
                fn.operation.attributes[VJP_FORWARD]).value
        for op in nested_ops(fn.operation):
            if _is_user_eqn(op):
                op.attributes[USER] = ir.UnitAttr.get()
            if op.name == "jaxpr.vjp":
                _mark_seeds(op, body)
    if originals:
        for fn in body.operations:
            for op in nested_ops(fn.operation):
                if op.name == "jaxpr.call" and forward.get(callee_of(op)) in traced:
                    op.attributes["callee"] = ir.FlatSymbolRefAttr.get(
                        forward[callee_of(op)])
    if before_expansion is not None:
        before_expansion(_function(module, name), _function(copy, name))
    # (custom_jvp/custom_vjp calls and checkpoints outside differentiation stay as
    # they are: JAX prints them as such)
    expand_transforms(copy, lower_leftovers=False)
    return copy, body, traced


def _function(module, name: str):
    return next(f.operation for f in module_body(module).operations
                if symbol_name(f.operation) == name)


def _mark_seeds(vjp, body) -> None:
    """Marks the cotangent operands of a vjp that are grad's seed (a scalar constant 1)."""
    callee = next((f.operation for f in body.operations
                   if symbol_name(f.operation) == callee_of(vjp)), None)
    if callee is None:
        return
    n_primals = len(callee.regions[0].blocks[0].arguments)
    for v in list(vjp.operands)[n_primals:]:
        owner = v.owner
        if isinstance(owner, ir.Block):
            continue
        owner = owner.operation
        if owner.name == "jaxpr.constant" and not ir.RankedTensorType(v.type).shape and \
                bool(decode(owner.attributes["value"]).reshape(-1)[0] == 1):
            owner.attributes[SEED] = ir.UnitAttr.get()


def _rule_part(fn) -> str | None:
    """'fwd' or 'bwd' for a custom_vjp rule's function (with symbolic zeros too: a part
    "bwd:1" is a bwd rule), else None."""
    found = custom_rules.marked(fn)
    kind = None if found is None else custom_rules.split_part(found[1])[0]
    return kind if kind in ("fwd", "bwd") else None


def _derived(fn) -> bool:
    return MARK in fn.attributes or _rule_part(fn) is not None


def _is_forward_part(fn) -> bool:
    """A linearization's forward part, or a custom_vjp fwd rule (the forward part of the
    call: its primal call is the user's)."""
    if MARK not in fn.attributes:
        return _rule_part(fn) == "fwd"
    mark = ir.DictAttr(fn.attributes[MARK])
    return "('part', 'fwd')" in ir.StringAttr(mark["params"]).value


def _is_user_eqn(op) -> bool:
    return (op.name.startswith("jaxpr.") and op.name not in _TRANSFORMS
            and op.name not in ("jaxpr.constant", "jaxpr.yield"))


def _inline_calls(main, fns: dict, names: set) -> None:
    """Inlines into `main` (repeatedly: inlined bodies hold calls too) every jaxpr.call of
    a function in `names`."""
    for _ in range(1000):
        calls = [op for op in nested_ops(main)
                 if op.name == "jaxpr.call" and callee_of(op) in names]
        if not calls:
            return
        for call in calls:
            replace_op(call, Inline(ir.InsertionPoint(call)).run(
                entry_block(fns[callee_of(call)]), list(call.operands)))


# (A custom_vjp call's rule handles name its registration, not what it computes: two
# calls of one function on the same operands are the same equation once rules are
# expanded.)
_RULE_ATTRS = {"jaxpr.custom_vjp_call": ("rule", "fwd")}


def _key(op):
    skip = (USER, FWD) + _RULE_ATTRS.get(op.name, ())
    attrs = tuple(sorted((n, str(op.attributes[n])) for n in op.attributes
                         if n not in skip))
    return (op.name, tuple(op.operands), attrs, tuple(str(r.type) for r in op.results))


def _merge_identical(block) -> None:
    """jaxpr-cse of the user's and forward parts' equations (a backward part's stay
    apart, as in JAX's), except that the marks do not tell equations apart (a user mark
    survives on the equation kept), and that the values a forward part computes beside
    the user's equations (residuals) move up to just after the user equation they
    followed there: JAX's linearization emits each equation's residuals right after it.

        %y = exp %x (user); ...; %y2 = exp %x (fwd, merged into %y); %r = sub 1, %y2 (fwd)
      ==> %y = exp %x; %r = sub 1, %y; ...
    """
    seen = {}
    user_maps = {}    # (body, operands) -> the user's shard_map
    with_bodies = {}  # (name, operands, attributes) -> the user's cond/scan/while
    position = {}     # value -> position of the equation defining it (block order)
    anchor = None     # where the next residual goes: after this equation
    for i, op in enumerate(list(block.operations)):
        op = op.operation
        for region in op.regions:
            for inner in region.blocks:
                _merge_identical(inner)
        position.update((r, float(i)) for r in op.results)
        if FWD not in op.attributes:
            anchor = None
        if len(op.regions) and isinstance(op.opview, JaxprOp):
            key = _key(op)[:3]
            if USER in op.attributes:
                with_bodies[key] = op
            elif FWD in op.attributes and key in with_bodies:
                anchor = _replace_extended(with_bodies.pop(key), op, position)
            continue
        if op.name == "jaxpr.shard_map":
            if USER in op.attributes:
                user_maps[(callee_of(op), tuple(op.operands))] = op
            elif FWD in op.attributes and FORWARD_OF in op.attributes:
                anchor = _replace_shard_map(op, user_maps, position) or anchor
                continue
        if not mergeable(op):
            continue
        key = _key(op)
        first = seen.get(key)
        if first is None:
            seen[key] = op
            if anchor is not None and USER not in op.attributes:
                anchor = _move_after(op, anchor, position)
            continue
        if not any(m in o.attributes for o in (op, first) for m in (USER, FWD)):
            continue   # (two equations of a backward part: JAX's has both too)
        for old, new in zip(op.results, first.results):
            old.replace_all_uses_with(new)
        if USER in op.attributes:
            first.attributes[USER] = ir.UnitAttr.get()
        if FWD in op.attributes and USER in first.attributes:
            anchor = first
        op.erase()


def _replace_extended(user, fwd, position):
    """The forward part's version of a user's cond/scan/while (the same operands, the
    user's results first, then residuals) takes the place of the user's when nothing
    reads the user's: JAX's linearization has only that one. Returns the next anchor."""
    if any(list(r.uses) for r in user.results) or len(fwd.results) < len(user.results) or \
            any(a.type != b.type for a, b in zip(user.results, fwd.results)):
        return None
    fwd.move_after(user)
    at = position.get(user.results[0], -1.0) if len(user.results) else -1.0
    for r in fwd.results:
        position[r] = at
    fwd.attributes[USER] = ir.UnitAttr.get()
    user.erase()
    return fwd


def _replace_shard_map(fwd, user_maps, position):
    """A forward part's shard_map (its residuals, then the user's results) takes the
    place of the user's shard_map it differentiates (same operands): JAX's linearization
    has only that one. Returns it (the next anchor), or None."""
    n, body = ir.StringAttr(fwd.attributes[FORWARD_OF]).value.split(":", 1)
    user = user_maps.pop((body, tuple(fwd.operands)), None)
    if user is None or len(fwd.results) != int(n) + len(user.results) or \
            any(a.type != b.type for a, b in zip(user.results, fwd.results[int(n):])):
        return None
    fwd.move_after(user)
    at = position.get(user.results[0], -1.0) if len(user.results) else -1.0
    for r in fwd.results:
        position[r] = at
    for old, new in zip(user.results, fwd.results[int(n):]):
        old.replace_all_uses_with(new)
    fwd.attributes[USER] = ir.UnitAttr.get()
    user.erase()
    return fwd


def _move_after(op, anchor, position):
    """Moves `op` to just after `anchor` when its operands are defined before there;
    returns the next anchor (None once an equation could not move: order is kept)."""
    at = position[anchor.results[0]] if len(anchor.results) else None
    if at is None or not len(op.results) or any(
            position.get(v, -1.0) > at for v in op.operands):
        return None
    op.move_after(anchor)
    for r in op.results:
        position[r] = at + 1e-6
    return op


def _remove_dead(block) -> None:
    """jaxpr-dce for the equations the expansion made; the user's stay."""
    for op in reversed(list(block.operations)):
        op = op.operation
        if (op.name.startswith("jaxpr.") and USER not in op.attributes
                and isinstance(op.opview, JaxprOp) and len(op.results)
                and all(not list(r.uses) for r in op.results) and not has_effects(op)):
            op.erase()
            continue
        for region in op.regions:
            for inner in region.blocks:
                _remove_dead(inner)


__all__ = ["FWD", "SEED", "USER", "expanded_function"]
