"""The jet interpreter (mjax/experimental/jet.py is the public module): a traced
function's jaxpr interpreted equation by equation on (primal, Taylor coefficients)
pairs, and the rules for the equations that hold other jaxprs (nested jit, custom_jvp /
custom_vjp calls, checkpoint, cond, scan, while). The per-primitive rules are in jet_taylor.py."""
from __future__ import annotations

import re

import numpy as np

import mjax.numpy as jnp
from mjax import lax
from mjax.base import tree_util
from mjax.jit.api import jit, make_jaxpr
from mjax.tracing.core import current_trace
from mjax.dialect.ops import control_flow as C
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import KeyType
from mjax.jaxpr.objects import DropVar, Literal, jaxpr_as_fun
from mjax.tracing.primitive import primitive_of


# ---- symbolic zeros ---------------------------------------------------------------
class ZeroTerm:
    """One coefficient known to be zero (a rule may give it in place of an array)."""

    def __repr__(self):
        return "zero_term"


class ZeroSeries:
    """A whole series known to be zero (a value that does not depend on the inputs)."""

    def __repr__(self):
        return "zero_series"


zero_term = ZeroTerm()
zero_series = ZeroSeries()
tree_util.register_pytree_node(ZeroTerm, lambda z: ((), None), lambda _, xs: zero_term)
tree_util.register_pytree_node(ZeroSeries, lambda z: ((), None), lambda _, xs: zero_series)

# primitive -> rule(primals_in, series_in, **params) -> (primal_out, series_out); for a
# primitive with several results, (list of primals, list of series). A rule may return
# zero_series for a series it knows is zero.
jet_rules: dict = {}

# (JAX keeps per-call-primitive parameter updaters here; mjax's call rules need none.)
call_param_updaters: dict = {}


class _NoJetRule(NotImplementedError, KeyError):
    """No Taylor rule for a primitive: NotImplementedError, and the KeyError JAX's
    `jet_rules[primitive]` lookup raises."""

    def __str__(self):
        return str(self.args[0])


# ---- the API -------------------------------------------------------------------------
def jet(fun, primals, series, factorial_scaled=True, **_):
    """Taylor-mode higher-order differentiation of `fun` at `primals` along `series`.

    `primals` is a tuple or list of arrays (one per positional argument of `fun`);
    `series` has one list of K terms per argument. Returns `(primals_out, series_out)`,
    where `primals_out = fun(*primals)` and `series_out` has `primals_out`'s structure
    with each array replaced by its list of K output terms. With `factorial_scaled`
    (the default) the terms are derivatives (the k-th term is d^k/dt^k of the path);
    otherwise they are Taylor coefficients (that derivative divided by k!).
    """
    orders = set(len(terms) for terms in series)
    if len(orders) != 1:
        raise ValueError("jet terms have inconsistent lengths for different arguments")
    order, = orders
    primals, series = list(primals), [list(terms) for terms in series]
    for i, (x, terms) in enumerate(zip(primals, series)):
        if not tree_util.treedef_is_leaf(tree_util.tree_structure(x)):
            raise ValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if not tree_util.treedef_is_leaf(tree_util.tree_structure(t)):
                raise ValueError(f"term {j} for argument {i} is not an array")
    if len(primals) != len(series):
        raise TypeError(f"jet: got {len(primals)} primal values but {len(series)} series; "
                        f"give one series (a list of {order} terms) per primal")
    if factorial_scaled:
        series = [[jnp.asarray(t) / fact(k + 1) for k, t in enumerate(terms)]
                  for terms in series]
    out_primals, out_series, out_tree = _jet_flat(fun, order, primals, series)
    if factorial_scaled:
        out_series = [[t * fact(k + 1) for k, t in enumerate(terms)] for terms in out_series]
    return (tree_util.tree_unflatten(out_tree, out_primals),
            tree_util.tree_unflatten(out_tree, out_series))


def jet2(fun, primals, series, **_):
    """`jet` on plain Taylor coefficients (factorial_scaled=False)."""
    return jet(fun, primals, series, factorial_scaled=False)


def fact(n):
    """n! as exp(lgamma(n + 1)), the float value JAX's jet scales terms by."""
    return lax.exp(lax.lgamma(n + 1.))


def _jet_flat(fun, order, primals, series):
    """(output primals, their coefficient lists, output tree) of `fun`, traced."""
    closed, shapes = make_jaxpr(fun, return_shape=True)(*primals)
    out_tree = tree_util.tree_structure(shapes)
    jaxpr, consts = closed.jaxpr, closed.consts
    if current_trace() is None and _has_keys(jaxpr):
        # (ops on typed keys have no eager form: key arrays are wrappers of their data
        # until a trace; such a jaxpr is interpreted as one program, as eval_jaxpr does)
        outs, out_series = jit(lambda ps, ss: jet_jaxpr(jaxpr, consts, order, ps, ss))(
            primals, series)
    else:
        outs, out_series = jet_jaxpr(jaxpr, consts, order, primals, series)
    # (a constant output is a Literal of the jaxpr; JAX's jet gives back the Python
    # constant `fun` returned, whose zero terms are weakly typed)
    outs = [p.item() if isinstance(v, Literal) and np.ndim(p) == 0 else p
            for v, p in zip(closed.jaxpr.outvars, outs)]
    return outs, instantiate_series(outs, out_series, order), out_tree


def instantiate_series(primals, series, order):
    """Each zero_series (and zero_term) of `series` replaced by arrays of zeros."""
    return [[jnp.zeros_like(p)] * order if s is zero_series
            else [jnp.zeros_like(p) if t is zero_term else t for t in s]
            for p, s in zip(primals, series)]


def _has_keys(jaxpr) -> bool:
    return any(isinstance(getattr(v.aval, "dtype", None), KeyType)
               for eqn in jaxpr.eqns for v in (*eqn.invars, *eqn.outvars))


def _discrete(x) -> bool:
    return getattr(getattr(x, "dtype", None), "kind", None) in ("b", "i", "u")


def _zeros_for(x):
    return jnp.zeros(np.shape(x), dtype=jnp.result_type(x))


# ---- the interpreter ---------------------------------------------------------------
def jet_jaxpr(jaxpr, consts, order, primals, series):
    """Interprets `jaxpr` on (primal, coefficients) pairs: returns the output primals
    and their series (zero_series where an output does not depend on the series)."""
    env: dict = {}

    def read(v):
        if isinstance(v, Literal):
            return v.val, zero_series
        return env[v]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = (c, zero_series)
    for v, p, s in zip(jaxpr.invars, primals, series):
        env[v] = (p, s)
    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        ps = [p for p, _ in ins]
        ss = [s for _, s in ins]
        prim = eqn.primitive
        if all(s is zero_series for s in ss):
            out = prim.bind(*ps, **eqn.params)
            outs = list(out) if prim.multiple_results else [out]
            out_ss = [zero_series] * len(outs)
        else:
            rule = jet_rules.get(prim)
            if rule is None:
                raise _NoJetRule(f"jet: no Taylor rule for primitive '{prim.name}' "
                                 f"(add one to mjax.experimental.jet.jet_rules)")
            ss = [[_zeros_for(p)] * order if s is zero_series
                  else [_zeros_for(p) if t is zero_term else t for t in s]
                  for p, s in zip(ps, ss)]
            out, out_s = rule(ps, ss, **eqn.params)
            if prim.multiple_results:
                outs, out_ss = list(out), list(out_s)
            else:
                outs, out_ss = [out], [out_s]
            # (an integer or boolean value is piecewise constant: its series is zero)
            out_ss = [zero_series if _discrete(p) else s for p, s in zip(outs, out_ss)]
        for v, p, s in zip(eqn.outvars, outs, out_ss):
            if not isinstance(v, DropVar):
                env[v] = (p, s)
    outs = [read(v) for v in jaxpr.outvars]
    return [p for p, _ in outs], [s for _, s in outs]


def _jet_closed(closed, order, primals, series):
    """A ClosedJaxpr's outputs and their series, every series instantiated."""
    outs, out_s = jet_jaxpr(closed.jaxpr, closed.consts, order, primals, series)
    return outs, instantiate_series(outs, out_s, order)


def _inline_rule(primals_in, series_in, *, call_jaxpr=None, jaxpr=None, **_):
    """A custom_jvp/custom_vjp call or a checkpoint: jet of its primal body (JAX's jet
    also ignores the custom rules: it differentiates the primal function)."""
    body = call_jaxpr if call_jaxpr is not None else jaxpr
    return _jet_closed(body, len(series_in[0]), primals_in, series_in)


def _jit_rule(primals_in, series_in, *, jaxpr, name=None, **_):
    """A nested jit: a nested jit of the jet of its body."""
    order = len(series_in[0])

    def jetted(ps, ss):
        return _jet_closed(jaxpr, order, ps, ss)
    if name:   # (the jitted function's own name, without the symbol's _N suffix)
        jetted.__name__ = jetted.__qualname__ = re.sub(r"_\d+$", "", name)
    outs, out_s = jit(jetted)(list(primals_in), [list(s) for s in series_in])
    return list(outs), [list(s) for s in out_s]


def _cond_rule(primals_in, series_in, *, branches, **_):
    """cond: a cond (switch) over the jets of the branches; the index has no series."""
    order = len(series_in[0])
    index, ops, ops_s = primals_in[0], list(primals_in[1:]), [list(s) for s in series_in[1:]]

    def branch_fn(b):
        return lambda ps, ss: _jet_closed(b, order, ps, ss)
    outs, out_s = lax.switch(index, [branch_fn(b) for b in branches], ops, ops_s)
    return list(outs), [list(s) for s in out_s]


def _same_types(series, like):
    """`series` cast to the dtypes of `like` (a loop's carried series keep one type)."""
    return [[lax.convert_element_type(t, jnp.result_type(u)) for t, u in zip(s, l)]
            for s, l in zip(series, like)]


def _scan_rule(primals_in, series_in, *, jaxpr, length, reverse=False, unroll=1,
               num_consts, num_carry, **_):
    """scan: a scan carrying the carry's series; the xs' series are scanned over."""
    order = len(series_in[0])
    nc, nk = num_consts, num_carry
    consts, consts_s = list(primals_in[:nc]), [list(s) for s in series_in[:nc]]
    init = list(primals_in[nc:nc + nk])
    init_s = _same_types(series_in[nc:nc + nk], [[p] * order for p in init])

    def step(carry, x):
        c, c_s = carry
        outs, out_s = _jet_closed(jaxpr, order, [*consts, *c, *x[0]],
                                  [*consts_s, *c_s, *x[1]])
        return (outs[:nk], _same_types(out_s[:nk], init_s)), (outs[nk:], out_s[nk:])
    xs = (list(primals_in[nc + nk:]), [list(s) for s in series_in[nc + nk:]])
    (c, c_s), (ys, ys_s) = lax.scan(step, (init, init_s), xs, length=length,
                                    reverse=reverse, unroll=unroll)
    return [*c, *ys], [*map(list, c_s), *map(list, ys_s)]


def _while_rule(primals_in, series_in, *, cond_jaxpr, body_jaxpr, cond_nconsts,
                body_nconsts, **_):
    """while: a while loop carrying the series; the predicate reads only primals."""
    order = len(series_in[0])
    cc = list(primals_in[:cond_nconsts])
    nb = cond_nconsts + body_nconsts
    bc, bc_s = list(primals_in[cond_nconsts:nb]), [list(s) for s in series_in[cond_nconsts:nb]]
    init = list(primals_in[nb:])
    init_s = _same_types(series_in[nb:], [[p] * order for p in init])

    def body(carry):
        outs, out_s = _jet_closed(body_jaxpr, order, [*bc, *carry[0]], [*bc_s, *carry[1]])
        return outs, _same_types(out_s, init_s)
    c, c_s = lax.while_loop(lambda carry: jaxpr_as_fun(cond_jaxpr)(*cc, *carry[0])[0],
                            body, (init, init_s))
    return list(c), [list(s) for s in c_s]


jet_rules[primitive_of(T.CallOp)] = _jit_rule
jet_rules[primitive_of(T.CheckpointOp)] = _inline_rule
jet_rules[primitive_of(T.CustomJvpCallOp)] = _inline_rule
jet_rules[primitive_of(T.CustomVjpCallOp)] = _inline_rule
jet_rules[primitive_of(C.CondOp)] = _cond_rule
jet_rules[primitive_of(C.ScanOp)] = _scan_rule
jet_rules[primitive_of(C.WhileOp)] = _while_rule
