"""Function calls (inlined), While/If/Case (through mjax.lax) and XlaCallModule.

TF passes everything a loop body or branch uses as explicit operands, resource handles
and constants included. Handles, NumPy constants and loop-invariant values are closed
over instead of carried, so they stay what they are (a handle, a static shape) inside.
"""
from __future__ import annotations

import numpy as np

import mjax.lax as lax
import mjax.numpy as jnp
from mjax.experimental.tf2jax.graph import Resource
from mjax.experimental.tf2jax.ops.array import PendingList
from mjax.experimental.tf2jax.ops.registry import (UnsupportedOperationError, cast,
                                                   is_numpy, register)
from mjax.experimental.tf2jax.xla_module import call_module
from mjax.tracing.staging import eval_shape


def _jnp():
    return jnp


def _lax():
    return lax


@register("PartitionedCall", "StatefulPartitionedCall")
def _call(ctx, node, *args):
    return ctx.call(node.attrs.get("f") or node.op, args)


class _NoWrites:
    """Variable writes inside a loop body or branch cannot leave it: refuse them."""

    def __init__(self, ctx, node):
        self.ctx, self.node = ctx, node

    def __enter__(self):
        self.before = dict(self.ctx.state)

    def __exit__(self, *exc):
        changed = [k for k, v in self.ctx.state.items() if self.before.get(k) is not v]
        if changed and exc[0] is None:
            self.ctx.state.clear()
            self.ctx.state.update(self.before)
            raise UnsupportedOperationError(
                f"tf2jax: {self.node.op} (node '{self.node.name}' {self.ctx.where}) "
                f"assigns the variables {changed} inside its body; variable writes "
                f"inside control flow are not supported")


def _traced(x) -> bool:
    return not (is_numpy(x) or isinstance(x, Resource))


def _pred(p):
    jnp = _jnp()
    p = jnp.asarray(p)
    if p.shape != ():
        p = p.reshape(())
    return p if p.dtype == np.bool_ else p != 0


# ---- While ----------------------------------------------------------------------------------
def _passthrough(graph, i) -> bool:
    """Does the body return its i-th argument unchanged (maybe through Identity)?"""
    name, idx = graph.outputs[i]
    while idx == 0 and graph.nodes[name].op in ("Identity", "Snapshot"):
        name, idx = graph.nodes[name].inputs[0]
    return idx == 0 and name == graph.inputs[i]


@register("While", "StatelessWhile")
def _while(ctx, node, *args):
    cond_g = ctx.function(node.attrs["cond"])
    body_g = ctx.function(node.attrs["body"])
    carried = [i for i in range(len(args)) if not _passthrough(body_g, i)]
    for i in carried:
        if isinstance(args[i], Resource):
            raise UnsupportedOperationError(f"tf2jax: the loop of node '{node.name}' "
                                            f"{ctx.where} changes a resource handle")
    if any(isinstance(args[i], PendingList) for i in carried):
        args = _materialize_lists(ctx, node, body_g, list(args), carried)
    jnp = _jnp()
    init = tuple(jnp.asarray(args[i]) for i in carried)

    def full(carry):
        vals = list(args)
        for i, c in zip(carried, carry):
            vals[i] = c
        return vals

    def cond_fun(carry):
        (p,) = ctx.run(cond_g, full(carry))
        return _pred(p)

    def body_fun(carry):
        outs = ctx.run(body_g, full(carry))
        return tuple(cast(jnp.asarray(outs[i]), c.dtype).reshape(c.shape)
                     for i, c in zip(carried, carry))

    with _NoWrites(ctx, node):
        trips = _static_trip_count(ctx, cond_g, body_g, args, carried)
        if trips is None:
            final = _lax().while_loop(cond_fun, body_fun, init)
        else:   # a scan: reverse mode works (Keras RNNs train)
            final = _lax().fori_loop(0, trips, lambda _, c: body_fun(c), init)
    return full(final)


def _materialize_lists(ctx, node, body_g, args, carried):
    """Element shapes of the TensorLists the loop fills (`tf.map_fn`), from one abstract
    trace of the body; the lists start as zeros of that shape."""
    pending = [i for i in carried if isinstance(args[i], PendingList)]
    arrays = [i for i in carried if i not in pending]

    def probe(*xs):
        vals = list(args)
        for i, x in zip(arrays, xs):
            vals[i] = x
        outs = ctx.run(body_g, vals)
        if any(isinstance(outs[i], PendingList) for i in pending):
            raise UnsupportedOperationError(f"tf2jax: the loop of node '{node.name}' "
                                            f"{ctx.where} carries a TensorList of unknown "
                                            f"element shape that it never sets")
        return [outs[i] for i in pending]
    with _NoWrites(ctx, node):
        shapes = eval_shape(probe, *[_jnp().asarray(args[i]) for i in arrays])
    for i, s in zip(pending, shapes):
        args[i] = args[i].materialize(s.shape[1:])
    return args


_MAX_STATIC_TRIPS = 100_000


def _input_deps(graph, outputs) -> set:
    """Indices of the graph's inputs whose values `outputs` are computed from (data
    edges only: control edges order effects, they carry no value)."""
    seen, stack = set(), [n for n, _ in outputs]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        node = graph.nodes[name]
        stack.extend(n for n, _ in node.inputs)
    return {i for i, n in enumerate(graph.inputs) if n in seen}


def _static_trip_count(ctx, cond_g, body_g, args, carried):
    """The number of iterations when the condition depends only on constants (a counter
    against a bound, as in Keras RNNs and tf.range loops); None otherwise."""
    # Handles count as known: a value read through one is not, and is caught below.
    static = {i for i, a in enumerate(args) if is_numpy(a) or isinstance(a, Resource)}
    counters = [i for i in carried if i in static]
    changed = True
    while changed:       # drop carries whose update needs a run-time value
        changed = False
        for j in list(counters):
            if not _input_deps(body_g, [body_g.outputs[j]]) <= static:
                counters.remove(j)
                static.discard(j)
                changed = True
    if not counters or not _input_deps(cond_g, cond_g.outputs) <= static:
        return None
    vals = list(args)
    body_sub = type(body_g)(body_g.where, body_g.nodes, body_g.inputs,
                            [body_g.outputs[j] for j in counters])
    for trips in range(_MAX_STATIC_TRIPS):
        (p,) = ctx.run(cond_g, vals)
        if not is_numpy(p):
            return None
        if not np.asarray(p).reshape(-1).any():
            return trips
        outs = ctx.run(body_sub, vals)
        if not all(is_numpy(o) for o in outs):
            return None
        for j, o in zip(counters, outs):
            vals[j] = o
    return None


# ---- If and Case ----------------------------------------------------------------------------
def _branches(ctx, node, names, args):
    """Branch functions of the traced operands; everything else is closed over."""
    tout = node.attrs.get("Tout") or []
    operand_idx = [i for i, a in enumerate(args) if _traced(a)]
    operands = [args[i] for i in operand_idx]

    def make(name):
        graph = ctx.function(name)

        def branch(*ops):
            vals = list(args)
            for i, o in zip(operand_idx, ops):
                vals[i] = o
            outs = ctx.run(graph, vals)
            jnp = _jnp()
            return tuple(cast(jnp.asarray(o), t) if isinstance(t, np.dtype)
                         else jnp.asarray(o) for o, t in zip(outs, tout or [None] * len(outs)))
        return branch
    return [make(n) for n in names], operands


@register("If", "StatelessIf")
def _if(ctx, node, pred, *args):
    names = [node.attrs["then_branch"], node.attrs["else_branch"]]
    if is_numpy(pred):          # a constant condition: take the branch now
        taken = names[0] if np.asarray(pred).reshape(-1).any() else names[1]
        return ctx.call(taken, args)
    (then_fn, else_fn), operands = _branches(ctx, node, names, args)
    with _NoWrites(ctx, node):
        return list(_lax().cond(_pred(pred), then_fn, else_fn, *operands))


@register("Case", "StatelessCase")
def _case(ctx, node, index, *args):
    names = list(node.attrs["branches"])
    if is_numpy(index):
        i = int(index)
        return ctx.call(names[i if 0 <= i < len(names) else -1], args)
    fns, operands = _branches(ctx, node, names, args)
    with _NoWrites(ctx, node):
        return list(_lax().switch(index, fns, *operands))


# ---- XlaCallModule --------------------------------------------------------------------------
@register("XlaCallModule")
def _xla_call_module(ctx, node, *args):
    """A jax2tf-converted function: its StableHLO module, called through mjax.export."""
    a = node.attrs
    if a.get("has_token_input_output"):
        raise UnsupportedOperationError(f"tf2jax: XlaCallModule with tokens (node "
                                        f"'{node.name}' {ctx.where}) is not supported")
    if a.get("function_list"):
        raise UnsupportedOperationError(f"tf2jax: XlaCallModule calling TF functions "
                                        f"(call_tf; node '{node.name}' {ctx.where}) is not "
                                        f"supported")
    return call_module(a["module"], args, list(a.get("Sout") or []),
                       list(a.get("Tout") or []), list(a.get("platforms") or []),
                       fun_name=node.name)

