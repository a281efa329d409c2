"""User-defined derivatives: `custom_jvp`, `custom_vjp`, and `checkpoint` (remat)."""
from __future__ import annotations


import functools
import inspect


from mjax import tree_util
from mjax.ad import concrete
from mjax.ad.checkpoint_policies import encode as encode_policy
from mjax.api import trace_function
from mjax.core import aval_of_value, current_trace
from mjax.dialect.attributes import Symbol
from mjax.dialect.ops import transforms as T
from mjax.float0 import is_float0 as _is_float0

from mjax.ad.staging import (
    ShapedArrayArg, _is_inexact, _names, _wraps, _zeros, call_args, emit, emit_call,
    stage_function, staged)


# ---- custom rules ---------------------------------------------------------------------------
def lax_convert(x, dtype):
    from mjax import lax
    return lax.convert_element_type(x, dtype)


def _resolve_kwargs(fun, args, kwargs):
    """Binds keyword arguments to positions, as JAX's custom_jvp/custom_vjp do."""
    if not kwargs:
        return tuple(args)
    try:
        ba = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise TypeError(f"keyword arguments could not be resolved to positions: {e}") from None
    ba.apply_defaults()
    if ba.kwargs:
        raise TypeError("keyword arguments could not be resolved to positions")
    return ba.args


class _Consts:
    """Values that traced functions close over, merged by identity: they become trailing
    operands of the custom call (closure conversion, as JAX's custom_jvp `num_consts`)."""

    def __init__(self, *traced):
        self.values, self._pos = [], {}
        for t in traced:
            for v in t.captured:
                if id(v) not in self._pos:
                    self._pos[id(v)] = len(self.values)
                    self.values.append(v)
        self.avals = [aval_of_value(v).strip_weak_type() for v in self.values]

    def pick(self, traced, const_args):
        """The arguments `traced` expects for its captures, from all consts."""
        return [const_args[self._pos[id(v)]] for v in traced.captured]

    def __len__(self):
        return len(self.values)


def _trace_wrapper(body, avals, name, exact=None):
    """Traces body(*tracers) for abstract arguments `avals`; returns its function name
    (`exact` when given, else a fresh one from `name`)."""
    args = tuple(ShapedArrayArg(a) for a in avals)
    if exact:
        return trace_function(body, args, {}, name=exact, module=current_trace().module,
                              visibility="private").name
    return stage_function(body, args, {}, name=name).name


def _call_key(nd, p_tree, in_avals):
    """What identifies a staged custom call among calls of the same function: the static
    arguments (by identity), the argument structure and abstract values."""
    return (tuple(id(v) for v in nd), p_tree, tuple(in_avals))


def _split_static(args, nondiff_argnums):
    static = {i: args[i] for i in nondiff_argnums}
    dyn = [a for i, a in enumerate(args) if i not in static]

    def full(dyn_args):
        it = iter(dyn_args)
        return [static[i] if i in static else next(it) for i in range(len(args))]
    return [static[i] for i in nondiff_argnums], dyn, full


def _any_inexact(args) -> bool:
    return any(_is_inexact(aval_of_value(x)) for x in tree_util.tree_leaves(args))


class _CustomRules:
    """What custom_jvp and custom_vjp share: calling one stages the function and its
    rules (`_stage`), except where the rules can never run."""

    kind = ""  # "jvp" or "vjp"

    def __init__(self, fun, nondiff_argnums=()):
        _wraps(fun)(self)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self._in_rule = 0
        self._active = []   # (call key, emitter) of the custom calls being staged

    def _has_rules(self) -> bool:
        raise NotImplementedError

    def _recursive_ref(self, nd, dyn):
        """What a call of this function from inside its own rule emits, when its static
        arguments and argument structure match the call being staged; else None."""
        if not self._active:
            return None
        leaves = tree_util.tree_leaves(dyn)
        key = _call_key(nd, tree_util.tree_structure(tuple(dyn)),
                        [aval_of_value(x).strip_weak_type() for x in leaves])
        for k, ref in reversed(self._active):
            if k == key:
                return ref
        return None

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", str(self.fun))
        if not self._has_rules():
            raise AttributeError(f"No {self.kind.upper()} defined for custom_{self.kind} "
                                 f"function {name} using def{self.kind}.")
        args = _resolve_kwargs(self.fun, args, kwargs)
        nd, dyn, full = _split_static(args, self.nondiff_argnums)
        if self._in_rule:
            # Called from inside its own rule (as in `return f(x), f(x) * t`): the call
            # being staged if it matches (so differentiating the rule again applies the
            # rule, as in JAX).
            ref = self._recursive_ref(nd, dyn)
            if ref is not None:
                return ref(*dyn)
            # Other shapes or static arguments: a custom call of its own (its rule may
            # in turn refer back to the call being staged).
        if not _any_inexact(dyn):
            return self.fun(*args)  # no input can carry a tangent: the rules never run
        if current_trace() is None:
            # Called outside every transformation (mjax's differentiate under a trace):
            # JAX then calls the function as it is (a Python float result stays one).
            return self.fun(*args)
        if getattr(self, "_bwd_depth", 0) >= _MAX_BWD_NESTING:
            # Called from its own bwd rule, nested this deep (each level with other
            # static arguments, as an implicit-function bwd solving with the function
            # itself): staged plainly. JAX traces bwd only when differentiating; mjax
            # stages it with the call, so without a limit this recursion never ends.
            # Derivatives of this order and up use the function's own derivative.
            return self.fun(*args)
        return staged(lambda *d: self._stage(name, nd, full, *d), concrete_root=True)(*dyn)


class custom_jvp(_CustomRules):
    """A function with a user-defined JVP. JAX: jax.custom_jvp (defjvp, defjvps).

    Emits `jaxpr.custom_jvp_call @f {jvp = @g}`. Values the function or its rule close
    over become extra operands (`num_consts`); differentiating with respect to them is an
    error, as in JAX."""

    kind = "jvp"

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def _has_rules(self):
        return self.jvp is not None

    def defjvp(self, jvp, symbolic_zeros=False):
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp_(primals, tangents):
            out = self(*primals)
            parts = [j(t, out, *primals) for j, t in zip(jvps, tangents) if j is not None]
            if not parts:
                total = tree_util.tree_map(lambda o: _zeros(aval_of_value(o), False), out)
            else:
                total = tree_util.tree_map(lambda *ts: functools.reduce(lambda a, b: a + b, ts),
                                           *parts)
            return out, total
        self.defjvp(jvp_)

    def _stage(self, name, nd, full, *dyn_args):
        """Emits jaxpr.custom_jvp_call @f {jvp = @rule} in the current trace."""
        leaves = tree_util.tree_leaves(dyn_args)
        p_tree = tree_util.tree_structure(tuple(dyn_args))
        in_avals = [aval_of_value(x).strip_weak_type() for x in leaves]
        t_avals = [a for a in in_avals if _is_inexact(a)]
        f_tr = stage_function(lambda *d: self.fun(*full(d)), dyn_args, {}, name=name,
                              diff_leaves=())
        out_avals = f_tr.out_avals
        g_name = f"{name}_jvp_rule_{next(_names)}"
        key = _call_key(nd, p_tree, in_avals)

        def rule(*flat):
            n = len(in_avals)
            t_iter = iter(flat[n:])
            t_leaves = [next(t_iter) if _is_inexact(a) else _zeros(a) for a in in_avals]
            primals = tree_util.tree_unflatten(p_tree, flat[:n])
            tangents = tree_util.tree_unflatten(p_tree, t_leaves)
            out, tout = self.jvp(*nd, tuple(primals), tuple(tangents))
            o_leaves, o_tree = tree_util.tree_flatten(out)
            t_leaves, t_tree = tree_util.tree_flatten(tout)
            if o_tree != f_tr.out_tree or t_tree != f_tr.out_tree:
                raise TypeError(f"Custom JVP rule must produce primal and tangent outputs "
                                f"with equal container (pytree) structures, and equal to "
                                f"the output of the custom_jvp-decorated function {name}; "
                                f"got primal output {o_tree}, tangent output {t_tree} and "
                                f"function output {f_tr.out_tree}.")
            t_out = []
            for o, t, a in zip(o_leaves, t_leaves, out_avals):
                if _is_inexact(a):
                    t_out.append(lax_convert(t, a.dtype) if not _is_float0(t)
                                 else _zeros(a, False))
            return list(o_leaves) + t_out
        def trace_rule(g_name, emit_self):
            # The rule's own calls of this function (same argument structure) go to
            # `emit_self`; `used` records whether there were any.
            used = []

            def ref(*d):
                used.append(True)
                return emit_self(*d) if emit_self is not None else self.fun(*full(d))
            self._in_rule += 1
            self._active.append((key, ref))
            # The rule sees the primals' values where JAX would (not the tangents').
            rule_ = concrete.with_sources(rule, list(leaves) + [None] * len(t_avals))
            try:
                traced = trace_function(rule_, tuple(ShapedArrayArg(a) for a in
                                                    in_avals + t_avals), {}, name=g_name,
                                        module=current_trace().module,
                                        visibility="private")
            finally:
                self._active.pop()
                self._in_rule -= 1
            return traced, bool(used)

        # First trace the rule with its own calls inlined, which finds the values it
        # closes over; if it calls the function, trace it again with those calls as
        # custom_jvp_calls naming the rule itself (a recursive reference the passes
        # resolve lazily, as JAX traces rules lazily): so that differentiating the rule
        # applies the rule again, which higher-order derivatives need.
        g_tr, self_calls = trace_rule(f"{name}_jvp_rule_{next(_names)}", None)
        consts = _Consts(f_tr, g_tr)
        wrap_names = None
        if self_calls:
            g_tr.trace.func.operation.erase()
            g_name = f"{name}_jvp_rule_{next(_names)}"
            n_in, nc = len(leaves), len(consts)
            if nc:
                wrap_names = (f"{name}_{next(_names)}", f"{name}_jvp_rule_{next(_names)}")

            o_avals = [a.strip_weak_type() for a in out_avals]
            t_out = [a for a in o_avals if _is_inexact(a)]
            c_tan = [a for a in consts.avals if _is_inexact(a)]
            # The rule (and wrappers) have no signature in the module yet: give it.
            known = {g_name: (in_avals + t_avals, o_avals + t_out)}
            if nc:
                known[wrap_names[0]] = (in_avals + consts.avals, o_avals)
                known[wrap_names[1]] = (in_avals + consts.avals + t_avals + c_tan,
                                        o_avals + t_out)

            def signature(fn):
                if str(fn) in known:
                    return known[str(fn)]
                return T.module_signatures(current_trace().module.operation)(fn)

            def self_call(*d):
                ls = tree_util.tree_leaves(d)
                if not nc:
                    outs = emit(T.CustomJvpCallOp, ls, callee=Symbol(f_tr.name),
                                jvp=Symbol(g_name), signature=signature)
                else:
                    outs = emit(T.CustomJvpCallOp, ls + consts.values,
                                callee=Symbol(wrap_names[0]), jvp=Symbol(wrap_names[1]),
                                num_consts=nc, signature=signature)
                for t, a in zip(outs, out_avals):
                    t.aval = a
                return tree_util.tree_unflatten(f_tr.out_tree, outs)
            g_tr, _ = trace_rule(g_name, self_call)
            if any(id(v) not in consts._pos for v in g_tr.captured):
                raise NotImplementedError(
                    f"custom_jvp rule of {name} calls {name} and closes over values it "
                    f"did not close over when traced with that call inlined")
        if not len(consts):
            outs = emit(T.CustomJvpCallOp, leaves, callee=Symbol(f_tr.name),
                        jvp=Symbol(g_tr.name))
        else:
            n, nc = len(leaves), len(consts)
            c_tan = [a for a in consts.avals if _is_inexact(a)]

            def f_body(*xs):
                return emit_call(f_tr.name, list(xs[:n]) + consts.pick(f_tr, xs[n:]))

            def g_body(*xs):
                primals, cs = xs[:n], xs[n:n + nc]
                tangents = xs[n + nc:n + nc + len(t_avals)]
                return emit_call(g_tr.name, list(primals) + list(tangents)
                                 + consts.pick(g_tr, cs))
            f_name = _trace_wrapper(f_body, in_avals + consts.avals, name,
                                    exact=wrap_names and wrap_names[0])
            g_name = _trace_wrapper(g_body, in_avals + consts.avals + t_avals + c_tan,
                                    f"{name}_jvp_rule", exact=wrap_names and wrap_names[1])
            outs = emit(T.CustomJvpCallOp, list(leaves) + consts.values,
                        callee=Symbol(f_name), jvp=Symbol(g_name), num_consts=nc)
        for t, a in zip(outs, out_avals):
            t.aval = a
        return tree_util.tree_unflatten(f_tr.out_tree, outs)


# How deeply a custom_vjp's bwd may stage calls of the same function with their own
# rules (enough for derivatives of order 3 through such a bwd).
_MAX_BWD_NESTING = 3


class custom_vjp(_CustomRules):
    """A function with a user-defined VJP. JAX: jax.custom_vjp (defvjp).

    Emits `jaxpr.custom_vjp_call @f {fwd = @a, bwd = @b}`; residuals may be any pytree.
    Values fun/fwd/bwd close over become extra operands (`num_consts`; bwd receives the
    ones it uses as extra residuals); differentiating with respect to them is an error,
    as in JAX."""

    kind = "vjp"

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = self.bwd = None

    def _has_rules(self):
        return self.fwd is not None

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        self.fwd, self.bwd = fwd, bwd

    def _retrace_fwd(self, name, nd, dyn_args, fwd_flat, f_tr, a_tr, b_tr, wrapped=None):
        """Traces fwd again with its own calls of the function as custom_vjp_calls
        naming fwd itself (a recursive reference), so that differentiating the forward
        pass again applies the custom rule, as in JAX. With consts, `wrapped` is
        (consts, {wrapper name: signature}, (f, fwd, bwd) wrapper names): the self-calls
        name the closure-converted wrappers, traced afterwards under those names."""
        a_tr.trace.func.operation.erase()
        a_name = f"{name}_fwd_{next(_names)}"
        strip = [a.strip_weak_type() for a in a_tr.out_avals]
        known = {a_name: ([x.strip_weak_type() for x in a_tr.in_avals], strip)}
        if wrapped is not None:
            known.update(wrapped[1])

        def signature(fn):
            if str(fn) in known:
                return known[str(fn)]
            return T.module_signatures(current_trace().module.operation)(fn)

        def self_call(*d):
            if wrapped is not None:
                consts, _, (w_f, w_a, w_b) = wrapped
                outs = emit(T.CustomVjpCallOp, tree_util.tree_leaves(d) + consts.values,
                            callee=Symbol(w_f), fwd=Symbol(w_a), bwd=Symbol(w_b),
                            num_consts=len(consts), signature=signature)
                for t, a in zip(outs, f_tr.out_avals):
                    t.aval = a
                return tree_util.tree_unflatten(f_tr.out_tree, outs)
            outs = emit(T.CustomVjpCallOp, tree_util.tree_leaves(d), callee=Symbol(f_tr.name),
                        fwd=Symbol(a_name), bwd=Symbol(b_tr.name), signature=signature)
            for t, a in zip(outs, f_tr.out_avals):
                t.aval = a
            return tree_util.tree_unflatten(f_tr.out_tree, outs)
        in_tree = tree_util.tree_structure(tuple(dyn_args))
        in_avals = [aval_of_value(x).strip_weak_type() for x in tree_util.tree_leaves(dyn_args)]
        self._in_rule += 1
        self._active.append((_call_key(nd, in_tree, in_avals), self_call))
        try:
            fwd_ = concrete.with_sources(fwd_flat, tree_util.tree_leaves(dyn_args))
            return trace_function(fwd_, dyn_args, {}, name=a_name,
                                  module=current_trace().module, visibility="private")
        finally:
            self._active.pop()
            self._in_rule -= 1

    def _stage(self, name, nd, full, *dyn_args):
        """Emits jaxpr.custom_vjp_call @f {fwd = @a, bwd = @b} in the current trace."""
        leaves = tree_util.tree_leaves(dyn_args)
        in_tree = tree_util.tree_structure(tuple(dyn_args))
        in_avals = [aval_of_value(x).strip_weak_type() for x in leaves]
        f_tr = stage_function(lambda *d: self.fun(*full(d)), dyn_args, {}, name=name,
                              diff_leaves=())
        out_avals = f_tr.out_avals
        res_info = {}

        def fwd_flat(*p):
            got = self.fwd(*full(p))
            if not isinstance(got, (tuple, list)) or len(got) != 2:
                raise TypeError(f"Custom VJP fwd rule {getattr(self.fwd, '__name__', '')} "
                                f"for function {name} must produce a pair (list or tuple "
                                f"of length two) representing primal outputs and "
                                f"residuals (values stored from the forward pass for use "
                                f"on the backward pass), got {got}.")
            out, res = got
            o_leaves, o_tree = tree_util.tree_flatten(out)
            if o_tree != f_tr.out_tree:
                raise TypeError(f"Custom VJP fwd rule must produce a pair where the first "
                                f"element represents the primal output (equal to the "
                                f"output of the custom_vjp-decorated function {name}), "
                                f"but got primal output structure {o_tree} for function "
                                f"output structure {f_tr.out_tree}.")
            r_leaves, res_info["tree"] = tree_util.tree_flatten(res)
            return list(o_leaves) + list(r_leaves)
        self_calls = []

        def count_self_call(*d):   # fwd calling the function itself: inlined, counted
            self_calls.append(True)
            return self.fun(*full(d))
        self._in_rule += 1
        self._active.append((_call_key(nd, in_tree, in_avals), count_self_call))
        try:
            a_tr = stage_function(fwd_flat, dyn_args, {}, name=f"{name}_fwd", diff_leaves=())
        finally:
            self._active.pop()
            self._in_rule -= 1
        n_out = len(out_avals)
        res_avals = list(a_tr.out_avals[n_out:])
        ct_avals = [a for a in out_avals if _is_inexact(a)]

        def bwd_flat(*flat):
            nres = len(res_avals)
            res = tree_util.tree_unflatten(res_info["tree"], flat[:nres])
            ct_iter = iter(flat[nres:])
            cts = [next(ct_iter) if _is_inexact(a) else _zeros(a) for a in out_avals]
            got = self.bwd(*nd, res, tree_util.tree_unflatten(f_tr.out_tree, cts))
            if isinstance(got, list):
                got = tuple(got)
            if not isinstance(got, tuple) or len(got) != len(dyn_args):
                got_tree = tree_util.tree_structure(got)
                raise TypeError(f"Custom VJP bwd rule must produce an output with the "
                                f"same container (pytree) structure as the args tuple of "
                                f"the primal function, and in particular must produce a "
                                f"tuple of length equal to the number of arguments to "
                                f"the primal function, but got bwd output structure "
                                f"{got_tree} for primal input structure {in_tree}.")
            g_leaves = []
            for g, a in zip(got, dyn_args):
                n = len(tree_util.tree_leaves(a))
                gl = [None] * n if g is None else tree_util.tree_leaves(g)
                if len(gl) != n:
                    raise TypeError(f"Custom VJP bwd rule must produce an output with "
                                    f"the same container (pytree) structure as the args "
                                    f"tuple of the primal function; got {got} for primal "
                                    f"input structure {in_tree}.")
                g_leaves.extend(gl)
            return [lax_convert(g, a.dtype) if g is not None and not _is_float0(g)
                    else _zeros(a, False)
                    for g, a in zip(g_leaves, in_avals) if _is_inexact(a)]
        self._bwd_depth = getattr(self, "_bwd_depth", 0) + 1
        try:
            # bwd sees the residuals' values where JAX would (not the cotangents').
            bwd_ = concrete.with_sources(bwd_flat, concrete.result_tracers(a_tr, n_out)
                                         + [None] * len(ct_avals))
            b_tr = stage_function(bwd_, tuple(ShapedArrayArg(a)
                                                  for a in res_avals + ct_avals), {},
                                  name=f"{name}_bwd")
        finally:
            self._bwd_depth -= 1
        consts = _Consts(f_tr, a_tr, b_tr)
        if not len(consts) and self_calls:
            a_tr = self._retrace_fwd(name, nd, dyn_args, fwd_flat, f_tr, a_tr, b_tr)
        if not len(consts):
            outs = emit(T.CustomVjpCallOp, leaves, callee=Symbol(f_tr.name),
                        fwd=Symbol(a_tr.name), bwd=Symbol(b_tr.name))
        else:
            n, nc = len(leaves), len(consts)
            b_consts = [consts.avals[consts._pos[id(v)]] for v in b_tr.captured]
            wrap = None
            if self_calls:
                # fwd calls the function and closes over traced values: its self-calls
                # become calls of the wrappers below (by name, before they exist).
                wrap = (f"{name}_{next(_names)}", f"{name}_fwd_{next(_names)}",
                        f"{name}_bwd_{next(_names)}")
                o_avals = [a.strip_weak_type() for a in out_avals]
                r_avals = [a.strip_weak_type() for a in res_avals]
                ins = in_avals + consts.avals
                grads = ([a for a in in_avals if _is_inexact(a)]
                         + [a for a in consts.avals if _is_inexact(a)])
                sigs = {k: ([a.strip_weak_type() for a in i], [a.strip_weak_type() for a in o])
                        for k, (i, o) in {
                            wrap[0]: (ins, o_avals),
                            wrap[1]: (ins, o_avals + r_avals + b_consts),
                            wrap[2]: (r_avals + b_consts + ct_avals, grads)}.items()}
                a_tr = self._retrace_fwd(name, nd, dyn_args, fwd_flat, f_tr, a_tr, b_tr,
                                         wrapped=(consts, sigs, wrap))
                if any(id(v) not in consts._pos for v in a_tr.captured):
                    raise NotImplementedError(
                        f"custom_vjp fwd of {name} calls {name} and closes over values "
                        f"only its second trace captures")

            def f_body(*xs):
                return emit_call(f_tr.name, list(xs[:n]) + consts.pick(f_tr, xs[n:]))

            def a_body(*xs):
                # bwd's own captures travel as extra residuals
                res = emit_call(a_tr.name, list(xs[:n]) + consts.pick(a_tr, xs[n:]))
                return list(res) + consts.pick(b_tr, xs[n:])

            def b_body(*xs):
                nres = len(res_avals)
                res, b_cs = xs[:nres], xs[nres:nres + len(b_consts)]
                cts = xs[nres + len(b_consts):]
                got = emit_call(b_tr.name, list(res) + list(cts) + list(b_cs))
                return list(got) + [_zeros(a, False) for a in consts.avals
                                    if _is_inexact(a)]
            f_name = _trace_wrapper(f_body, in_avals + consts.avals, name,
                                    exact=wrap and wrap[0])
            a_name = _trace_wrapper(a_body, in_avals + consts.avals, f"{name}_fwd",
                                    exact=wrap and wrap[1])
            b_name = _trace_wrapper(b_body, res_avals + b_consts + ct_avals,
                                    f"{name}_bwd", exact=wrap and wrap[2])
            outs = emit(T.CustomVjpCallOp, list(leaves) + consts.values,
                        callee=Symbol(f_name), fwd=Symbol(a_name), bwd=Symbol(b_name),
                        num_consts=nc)
        for t, a in zip(outs, out_avals):
            t.aval = a
        return tree_util.tree_unflatten(f_tr.out_tree, outs)


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=(),
               static_argnames=(), concrete=None):
    """Marks fun for rematerialization: reverse mode recomputes its forward pass in the
    backward pass instead of saving residuals (visible as `jaxpr.checkpoint` in the IR).
    JAX: jax.checkpoint (`concrete` was removed there: passing it raises, as in JAX)."""
    if concrete is not None:
        raise NotImplementedError("The `concrete` option to `jax.checkpoint` was removed "
                                  "in JAX v0.10.0; use `static_argnums` instead.")
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(
        static_argnums)
    static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(
        static_argnames)
    if static_argnames:   # (a static name passed positionally is a static position)
        try:
            params = list(inspect.signature(fun).parameters)
        except (TypeError, ValueError):
            params = []
        named_pos = tuple(params.index(n) for n in static_argnames
                          if n in params and params.index(n) not in static_argnums)
    else:
        named_pos = ()
    extra = encode_policy(policy)   # unsupported policies fail here, not silently

    @_wraps(fun)
    def remat_f(*args, **kwargs):
        static, dyn, full = _split_static(
            args, static_argnums + tuple(i for i in named_pos if i < len(args)))
        static_kw = {k: kwargs.pop(k) for k in static_argnames if k in kwargs}

        def checkpoint_impl(*a, **kw):
            traced = stage_function(lambda *d, **k: fun(*full(d), **k, **static_kw), a, kw,
                                    name=getattr(fun, "__name__", "checkpoint"))
            leaves = tree_util.tree_leaves((a, kw))
            outs = emit_call(traced.name, call_args(traced, leaves), traced.out_avals,
                             cls=T.CheckpointOp, prevent_cse=bool(prevent_cse), **extra)
            return tree_util.tree_unflatten(traced.out_tree, outs)
        return staged(checkpoint_impl)(*dyn, **kwargs)
    return remat_f


remat = checkpoint
