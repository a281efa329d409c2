"""Named scopes of the ops a differentiation derives, as JAX's name stacks show them:
an op of the JVP of a function computed under `my_model/conv` is named
`jvp(my_model)/conv` (`jvp()` outside any scope), its transpose
`transpose(jvp(my_model))/conv`. Jaxprs read these names (`eqn.source_info.name_stack`,
haiku's jaxpr_info), and lowering writes them into the HLO's op_name metadata
(`jit(loss)/transpose(jvp(my_model))/conv/mul`), as JAX does.

vmap names its batched functions' ops so too (`vmap(my_model)/conv`, `vmap(jvp())/cos`:
passes/batching.py). Ops in control-flow bodies and inlined nested jits are named at
lowering and inlining (passes/rules/op_names.py: `while/body/closed_call/...`,
`jit(g)/...`).

grad's primal call, whose value is unused (`_ = sin a` in its jaxpr) or gives only the aux
output, is JAX's forward part too: it calls a copy of the function named so.

A scope is an op's name location registered in `SCOPES` (mjax.tracing.source_info makes them);
the wrapped names are registered there too. Locations carrying other tags (XLA metadata's
fused locations, other names) are left as they are.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.passes.jaxpr_to_stablehlo import SCOPES

_PLAIN = ("FileLineColLoc", "CallSiteLoc", "UnknownLoc")
_WRAPPED: dict = {}      # (transform, location attribute) -> wrapped location, or False
_MAX_WRAPPED = 8192


def wrap_scopes(fn: ir.Operation, transform: str) -> None:
    """Names every op inside `fn` (a function a transformation just made) as computed
    under `transform` ("jvp", "transpose")."""
    get, advance = _WRAPPED.get, ir.WalkResult.ADVANCE     # (locals: one call per op)
    first = [True]

    def visit(op):
        # (renaming in the walk itself: setting a location changes no structure)
        if first[0]:            # (fn itself)
            first[0] = False
            return advance
        loc = op.location
        hit = get((transform, loc.attr))
        if hit is None:
            hit = _wrapped(loc, transform)
        if hit:
            op.location = hit
        return advance
    fn.operation.walk(visit, ir.WalkOrder.PRE_ORDER)


def _wrapped(loc: ir.Location, transform: str):
    key = (transform, loc.attr)
    hit = _WRAPPED.get(key)
    if hit is None:
        if len(_WRAPPED) >= _MAX_WRAPPED:
            _WRAPPED.clear()
        hit = _WRAPPED[key] = _wrap(loc, transform) or False
    return hit or None


def _wrap(loc: ir.Location, transform: str):
    scope = SCOPES.get(loc.attr)
    if scope is not None:
        head, sep, rest = scope.partition("/")
        name, child = f"{transform}({head}){sep}{rest}", loc.child_loc
    elif type(loc).__name__ in _PLAIN:
        name, child = f"{transform}()", loc
    else:
        return None
    new = ir.Location.name(name, childLoc=child, context=loc.context)
    SCOPES[new.attr] = name
    return new


def name_primal_call(ex, other: ir.Operation, callee: str) -> None:
    """Points `other`, a `jaxpr.call @callee` before a vjp of @callee (grad's primal call,
    its value unused or only its aux output used), at a copy of @callee named as JAX's
    forward part, which computes that value."""
    fn = ex.fns.get(callee)
    copy = fn.operation.clone(ip=ir.InsertionPoint.after(fn))
    name = ex.fns.fresh_name(f"{callee}_primal")
    with other.context:
        copy.attributes["sym_name"] = ir.StringAttr.get(name)
        copy.attributes["sym_visibility"] = ir.StringAttr.get("private")
        other.operation.attributes["callee"] = ir.FlatSymbolRefAttr.get(name)
    ex.fns.table[name] = copy
    wrap_scopes(copy, "jvp")
