"""Selective rematerialization: a checkpointed function restructured by its policy.

    f(x) = sin(dot(sin(x), w))        policy dots_saveable
 -> f'(x) = %a = checkpoint @g0(x)              // sin: recomputed in the backward pass
            %d = dot_general(%a, w)             // saveable: linearized inline, saved
            %y = checkpoint @g1(%d)             // sin: recomputed

Saveable ops stay inline, so reverse mode saves what their linearization needs; the other
ops are grouped by how many saveable ops precede them (their "level") into nested
`checkpoint`s (nothing saveable), whose inputs are the only residuals kept for them.
Coarser than JAX: a group's output that a saveable op or a later group reads is saved
too (here sin(x), which dot's transpose needs; JAX recomputes it from x). The gradient
is the same; only what is kept differs.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect.builder import Builder
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import aval_of
from mjax.passes.ir_util import clone_into, entry_block, is_terminator, set_results, used_values

SELECTIVE = ("dots_saveable", "dots_with_no_batch_dims_saveable", "save_only_these_names",
             "save_any_names_but_these", "save_anything_except_these_names",
             "dots_or_names")


def _is_dot(op, no_batch_dims: bool) -> bool:
    if op.name != "jaxpr.dot_general":
        return False
    (_, batch) = op.opview.params["dimension_numbers"]
    return not no_batch_dims or not any(len(b) for b in batch)


def saveable(op, policy: str, names=()) -> bool:
    """Whether `policy` lets reverse mode save op's results."""
    name = op.opview.params["name"] if op.name == "jaxpr.checkpoint_name" else None
    if policy == "dots_saveable":
        return _is_dot(op, False)
    if policy == "dots_with_no_batch_dims_saveable":
        return _is_dot(op, True)
    if policy == "save_only_these_names":
        return name is not None and name in names
    if policy == "save_any_names_but_these":
        return name is not None and name not in names
    if policy == "save_anything_except_these_names":
        return name is None or name not in names
    if policy == "dots_or_names":
        return _is_dot(op, False) or (name is not None and name in names)
    raise ValueError(f"not a selective remat policy: {policy}")


def split_by_policy(ex, callee: str, policy: str, prevent_cse: bool, names=()) -> str:
    """The name of f' (above) for @callee under a selective `policy` (reused if made)."""
    class _Remat:   # the derived-table key's transformation
        pass
    _Remat.__name__ = "remat"
    names = tuple(names or ())
    hit = ex.derived.get(callee, _Remat, policy=policy, names=names)
    if hit is not None:
        return hit
    fn = ex.fns.get(callee)
    block = entry_block(fn)
    ops = [o.operation for o in block.operations if not is_terminator(o.operation)]
    level = {a: 0 for a in block.arguments}
    op_level, groups = {}, {}
    for op in ops:
        ins = [level.get(v, 0) for v in used_values(op)]
        k = max(ins, default=0)
        if saveable(op, policy, names):
            k += 1
        else:
            groups.setdefault(k, []).append(op)
        op_level[op] = k
        for r in op.results:
            level[r] = k
    top = max(op_level.values(), default=0)
    ins, outs = T.function_signature(fn)
    new_name = ex.fns.fresh_name(f"{callee}_remat")
    new_fn, new_block = ex.fns.create(new_name, ins, None, fn)
    ex.derived.add(new_name, callee, _Remat, policy=policy, names=names)
    env = dict(zip(block.arguments, new_block.arguments))
    ip = ir.InsertionPoint(new_block)
    ret = [o.operation for o in block.operations if is_terminator(o.operation)][0]
    uses_outside = {}   # value -> read by an op outside its group (or returned)
    group_of = {op: op_level[op] for ops_ in groups.values() for op in ops_}
    for op in ops + [ret]:
        for v in used_values(op):
            owner = v.owner if not isinstance(v.owner, ir.Block) else None
            if owner is not None and owner in group_of and group_of.get(op) != group_of[owner]:
                uses_outside[v] = True
    for k in range(top + 1):
        for op in ops:
            if op_level[op] == k and op not in group_of:
                new = clone_into(op, ip, env)
                env.update(zip(op.results, new.results))
        members = groups.get(k, [])
        if not members:
            continue
        inside = {r for op in members for r in op.results}
        inputs = []
        for op in members:
            for v in used_values(op):
                if v not in inside and v not in inputs:
                    inputs.append(v)
        results = [r for op in members for r in op.results if r in uses_outside]
        if not results:
            continue
        g_name = ex.fns.fresh_name(f"{callee}_remat_group")
        g_fn, g_block = ex.fns.create(g_name, [aval_of(v.type) for v in inputs], None, fn)
        g_env = dict(zip(inputs, g_block.arguments))
        g_ip = ir.InsertionPoint(g_block)
        for op in members:
            new = clone_into(op, g_ip, g_env)
            g_env.update(zip(op.results, new.results))
        set_results(g_fn, [g_env[r] for r in results])
        outs_ = T.emit_transform(Builder(ip, members[0].location), T.CheckpointOp,
                                 *[env[v] for v in inputs], signature=ex.fns.signature,
                                 callee=A.Symbol(g_name), prevent_cse=prevent_cse)
        env.update(zip(results, outs_))
    set_results(new_fn, [env[v] for v in ret.operands])
    return new_name
