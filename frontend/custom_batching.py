"""JAX: jax.custom_batching: functions with a user-defined vmap rule (`custom_vmap`) and
the special case batched by a loop (`sequential_vmap`).

A call of a custom_vmap function outside vmap runs the function itself (eagerly, or
traced under jit). Under a trace it stages one custom call of the function (a
`jaxpr.custom_jvp_call`, printed as JAX's `custom_vmap_call`) whose Python batching rule
(passes/custom_rules.user_batching) is the user's: when `--jaxpr-batch` meets the call
with a batched operand, it traces

    rule(axis_size, in_batched, *args) -> (out, out_batched)

with the batched arguments at axis 0, and takes the results batched at 0 where
`out_batched` says so and unbatched elsewhere. vmap inside jit, jit inside vmap and
nested vmaps all reach the rule this way (nested: the innermost vmap applies it, the
outer ones batch what it computes, as in JAX).

Differentiation, as JAX 0.10.2: the call's JVP is again a custom_vmap call, of the
function's JVP, whose rule applies the user's rule to the JVP (forward mode, also under
vmap: jvp, jacfwd). Reverse mode (grad, vjp, linearize) cannot split that call into a
primal and a linear part and raises, as JAX does; wrap the custom_vmap function in a
custom_vjp to give it a reverse-mode rule.
"""
from __future__ import annotations

import functools
import inspect

from mjax import lax
from mjax.base import trace_trees, tree_util
from mjax.ad import levels
from mjax.ad.custom import _abstract, _reachable, _trace_into, custom_jvp
from mjax.ad.forward import jvp
from mjax.ad.staging import _is_inexact
from mjax.ad.symbolic_zeros import zeros_like_aval
from mjax.vmap.batching import vmap
from mjax.tracing.core import aval_of_value
from mjax.dialect import context
from mjax.tracing.primitive import tangent_aval
from mjax.tracing.staging import emit_call

__all__ = ["custom_vmap", "sequential_vmap"]


def _rule_name(rule) -> str:
    return getattr(rule, "__name__", "<unnamed rule>")


def _check_trees(rule, fun_tree, out_tree, batched_tree) -> None:
    """JAX's checks of what a vmap rule returned (ValueError, JAX's text)."""
    if out_tree != batched_tree:
        raise ValueError(f"structure of output value and output batching specification "
                         f"returned by custom vmap rule ({_rule_name(rule)}) do not "
                         f"match.\nOutput values: {out_tree}\nBatching spec: "
                         f"{batched_tree}")
    if out_tree != fun_tree:
        raise ValueError(f"structure of output returned by custom vmap rule "
                         f"({_rule_name(rule)}) does not match that of original "
                         f"custom-vmapped function.\nOriginal output: {fun_tree}\nRule "
                         f"output: {out_tree}")


def _call_rule(rule, fun_tree, axis_size, in_batched, args):
    """rule(axis_size, in_batched, *args), checked: (output leaves, batched flags)."""
    out, out_batched = rule(axis_size, list(in_batched), *args)
    leaves, out_tree = trace_trees.tree_flatten(out)
    flags, batched_tree = trace_trees.tree_flatten(out_batched)
    _check_trees(rule, fun_tree, out_tree, batched_tree)
    return leaves, [bool(b) for b in flags]


class custom_vmap:
    """A function whose behaviour under vmap is `def_vmap`'s rule. JAX:
    jax.custom_batching.custom_vmap.

    Reverse-mode differentiation is not supported (as in JAX): put a custom_vjp around
    the custom_vmap function for that."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None
        self._staged = None

    def __getattr__(self, name):
        # (as JAX: `def*` methods of the function wrapped, e.g. custom_jvp's defjvp)
        if name.startswith("def") and "fun" in vars(self):
            return getattr(self.fun, name)
        raise AttributeError(f"'custom_vmap' object has no attribute {name!r}")

    def def_vmap(self, vmap_rule):
        """Sets the rule `vmap_rule(axis_size, in_batched, *args) -> (out,
        out_batched)`: `in_batched` a list (one pytree of bools per argument) saying
        which argument leaves carry the batch axis (at 0), `out_batched` a pytree of
        bools of the output's structure. Returns the rule."""
        self.vmap_rule = vmap_rule
        self._staged = None
        return vmap_rule

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", str(self.fun))
        if kwargs:
            try:
                bound = inspect.signature(self.fun).bind(*args, **kwargs)
                bound.apply_defaults()
                if bound.kwargs:
                    raise TypeError("keyword-only arguments cannot be passed positionally")
            except (TypeError, ValueError) as e:
                raise TypeError(f"The input arguments to the custom_vmap-decorated "
                                f"function {name} could not be resolved to "
                                f"positional-only arguments. Binding failed with the "
                                f"error:\n{e}") from e
            args = bound.args
        if not self.vmap_rule:
            raise AttributeError(f"No batching rule defined for custom_vmap function "
                                 f"{name} using def_vmap.")
        if self._staged is None:
            self._staged = _Staged(self.fun, self.vmap_rule)
        return self._staged(*args)


class _Staged(custom_jvp):
    """How a custom_vmap function is staged: a custom_jvp call of the function, whose
    batching rule is the user's vmap rule and whose JVP is a custom_vmap call of the
    function's JVP (JAX: custom_vmap_p's batching and jvp rules)."""

    stage_exact_calls = True     # (integer arguments are batched by the rule too)

    def __init__(self, fun, rule):
        super().__init__(fun)
        self.vmap_rule = rule
        # (read by the passes through custom_rules.custom_attribute)
        self.batch_tracer = self._trace_batched
        self.differentiable_consts = True     # (its JVP rule takes their tangents)
        self.jaxpr_equation = ("custom_vmap_call", {"rule": _rule_name(rule)})
        name = getattr(fun, "__name__", "fun")
        self.no_reverse_mode = (
            f"the custom_vmap function {name} does not support reverse-mode autodiff "
            f"(grad, vjp, linearize), as in JAX; to customize both vmap and reverse-mode "
            f"autodiff, wrap it in a jax.custom_vjp")

    def _has_rules(self):
        return True

    def _rules(self):
        return (self.vmap_rule,)

    def _primal_function(self, call, module, primal):
        # (the function the call runs, over (argument leaves, consts): its JVP is the
        # derivative of this one, closed-over values included)
        call.callee = super()._primal_function(call, module, primal)
        return call.callee

    def _stage_differentiated(self, call, leaves, perturbed):
        # Staged as outside differentiation: the call keeps its rule handle (which the
        # batching pass looks its vmap rule up by), and the JVP pass traces the JVP rule
        # when it reaches the call (the rule calls no user code until batched).
        return self._stage_plain(call, leaves)

    # -- vmap ------------------------------------------------------------------------------
    def _trace_batched(self, call, module, dims, axis_size, axis_name):
        """The rule traced for a vmap of a staged call (custom_rules.user_batching): a
        function of the call's operands (argument leaves batched at `dims`, 0 or None,
        then its unbatched closed-over values) -> (its results, their dims)."""
        n = len(call.in_avals)
        if all(d is None for d in dims[:n]):
            # (only values the function or rule close over are batched: JAX never calls
            # the rule for a call with no batched argument; the body is batched instead)
            return None
        if any(d is not None for d in dims[n:]):
            raise NotImplementedError(
                f"vmap of the custom_vmap function {call.name}: it (or its rule) closes "
                f"over a value that this vmap batches; pass that value to the function "
                f"as an argument")
        in_batched = tree_util.tree_unflatten(call.tree, [d is not None for d in dims[:n]])
        avals = [a if d is None else a.update(shape=(axis_size, *a.shape))
                 for a, d in zip(call.in_avals, dims)]
        flags = []

        def body(*flat):
            args = tree_util.tree_unflatten(call.tree, list(flat))
            outs, batched = _call_rule(self.vmap_rule, call.out_tree, axis_size,
                                       in_batched, args)
            _check_types(self.vmap_rule, call.name, outs, batched, call.out_avals,
                         axis_size)
            flags[:] = batched
            return outs

        consts = call.consts
        with context(), levels.at(0), _reachable(consts.values):
            traced = _trace_into(module, body, _abstract(avals), f"{call.name}_vmap_rule")
            consts.check_captures(traced, f"the custom_vmap rule of {call.name}")
            name = traced.name
            if len(consts) or traced.captured:
                def with_consts(*xs):
                    return emit_call(traced.name, list(xs[:n])
                                     + consts.pick(traced.captured, xs[n:]))
                name = _trace_into(module, with_consts, _abstract(avals + consts.avals),
                                   f"{call.name}_vmap_rule").name
        return name, [0 if b else None for b in flags]

    # -- jvp -------------------------------------------------------------------------------
    def _later_jvp(self, call, module, zeros=()):
        """The JVP rule of a call (passes/forward_mode), over (argument leaves, consts,
        tangents of the inexact ones): a custom_vmap call of the JVP of the call's
        function, whose vmap rule is the user's rule's JVP (JAX: custom_vmap_jvp). The
        values the function closes over are differentiated as its arguments are, as in
        JAX."""
        n, consts = len(call.in_avals), call.consts
        avals = list(call.in_avals) + list(consts.avals)
        inexact = [_is_inexact(a) for a in avals]
        t_avals = [a.strip_weak_type() for a, d in zip(avals, inexact) if d]
        const_tangents = any(inexact[i] and i not in zeros for i in range(n, len(avals)))
        callee, rule, name = call.callee, self.vmap_rule, call.name
        n_leaf_t = sum(inexact[:n])

        def full_tangents(ts):
            it = iter(ts)
            return [next(it) if d else zeros_like_aval(tangent_aval(a))
                    for a, d in zip(avals, inexact)]

        def fun_jvp(ps, ts):
            outs, touts = jvp(lambda *xs: emit_call(callee, list(xs)), tuple(ps),
                              tuple(full_tangents(ts)))
            return _split_outs(outs, touts)

        fun_jvp.__name__ = f"{name}_jvp"

        def rule_jvp(axis_size, in_batched, ps, ts):
            ps_b, ts_b = in_batched
            if const_tangents or any(ps_b[n:]) or any(ts_b[n_leaf_t:]):
                raise NotImplementedError(
                    f"vmap of the JVP of the custom_vmap function {name} with respect to a "
                    f"value it closes over, or with such a value batched: pass that value "
                    f"to the function as an argument")
            return _rule_jvp(rule, call.tree, inexact[:n], call.out_tree, axis_size,
                             (ps_b[:n], ts_b[:n_leaf_t]), ps[:n], ts[:n_leaf_t])

        def body(*xs):
            inner = custom_vmap(fun_jvp)
            inner.def_vmap(rule_jvp)
            outs, touts = inner(list(xs[:len(avals)]), list(xs[len(avals):]))
            return list(outs) + list(touts)
        with context():
            traced = _trace_into(module, body, _abstract(avals + t_avals), f"{name}_jvp")
            consts.check_captures(traced, f"the custom_vmap rule of {name}")
            if not traced.captured:
                return traced.name

            def with_captures(*xs):
                return emit_call(traced.name, list(xs) + consts.pick(
                    traced.captured, xs[n:len(avals)]))
            return _trace_into(module, with_captures, _abstract(avals + t_avals),
                               f"{name}_jvp").name


def _split_outs(outs, touts):
    """(output leaves, tangent leaves of the inexact outputs)."""
    o_leaves, tree = trace_trees.tree_flatten(outs)
    t_leaves = tree.flatten_up_to(touts)
    return o_leaves, [t for o, t in zip(o_leaves, t_leaves)
                      if _is_inexact(aval_of_value(o))]


def _rule_jvp(rule, tree, inexact, out_tree, axis_size, in_batched, ps, ts):
    """The vmap rule of a custom_vmap JVP call: the user's rule for the primals batched
    together with their tangents, its JVP vmapped over the primals or tangents batched
    alone (JAX: custom_vmap_jvp's jvp_of_rule_rule)."""
    ps_b, ts_b = in_batched
    it = iter(ts_b)
    tb = [bool(next(it)) if d else False for d in inexact]
    mutual = [bool(p) and t for p, t in zip(ps_b, tb)]
    extra_p = [bool(p) and not t for p, t in zip(ps_b, tb)]
    extra_t = [t and not p for p, t, d in zip(ps_b, tb, inexact) if d]
    mutual_tree = tree_util.tree_unflatten(tree, mutual)
    found = {}

    def to_jvp(*args):
        outs, batched = _call_rule(rule, out_tree, axis_size, mutual_tree, args)
        found["batched"] = batched
        return tree_util.tree_unflatten(out_tree, outs)

    def jvp_over(p_leaves, t_leaves):
        it = iter(t_leaves)
        t_all = [next(it) if d else zeros_like_aval(tangent_aval(aval_of_value(p)))
                 for p, d in zip(p_leaves, inexact)]
        outs, touts = jvp(to_jvp, tuple(tree_util.tree_unflatten(tree, p_leaves)),
                          tuple(tree_util.tree_unflatten(tree, t_all)))
        return _split_outs(outs, touts)

    if not any(extra_p) and not any(extra_t):
        outs, touts = jvp_over(list(ps), list(ts))
        p_batched = found["batched"]
        t_batched = [b for b, o in zip(p_batched, outs) if _is_inexact(aval_of_value(o))]
        return (outs, touts), (p_batched, t_batched)
    # Batched alone: vmapped over here. Primal outputs never depend on tangents, so with
    # only tangents batched alone they stay as the rule gives them; the rest come at 0.
    in_axes = ([0 if e else None for e in extra_p], [0 if e else None for e in extra_t])
    out_axes = (0 if any(extra_p) else None, 0)
    outs, touts = vmap(jvp_over, in_axes=in_axes, out_axes=out_axes,
                       axis_size=axis_size)(list(ps), list(ts))
    p_batched = [True] * len(outs) if any(extra_p) else found["batched"]
    return (outs, touts), (p_batched, [True] * len(touts))


def _check_types(rule, name, outs, batched, out_avals, axis_size) -> None:
    """mjax types a vmap's results when it traces the function: the rule's outputs must
    have the function's shapes (with the batch axis where batched) and dtypes."""
    for k, (o, b, a) in enumerate(zip(outs, batched, out_avals)):
        got = aval_of_value(o)
        want = (axis_size, *a.shape) if b else tuple(a.shape)
        if tuple(got.shape) != want or got.dtype != a.dtype:
            raise ValueError(
                f"custom vmap rule ({_rule_name(rule)}) of {name} returned output {k} of "
                f"type {got.str_short()}, {'batched' if b else 'unbatched'}; mjax needs "
                f"the function's output type {a.str_short()} with "
                + (f"a leading batch axis of size {axis_size} ({a.dtype}{list(want)})"
                   if b else "no batch axis"))


def sequential_vmap(f):
    """A custom_vmap function whose vmap rule runs `f` once per batch element, in a loop
    (lax.map). JAX: jax.custom_batching.sequential_vmap."""
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        del axis_size
        leaves, tree = trace_trees.tree_flatten(list(args))
        flags = tree.flatten_up_to(list(in_batched))
        mapped = [x for x, b in zip(leaves, flags) if b]

        def one(mapped_leaves):
            it = iter(mapped_leaves)
            full = [next(it) if b else x for x, b in zip(leaves, flags)]
            return f(*tree_util.tree_unflatten(tree, full))
        out = lax.map(one, mapped)
        return out, trace_trees.tree_map(lambda _: True, out)
    return f
