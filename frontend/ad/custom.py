"""User-defined derivatives: `custom_jvp` and `custom_vjp` (`checkpoint`: mjax.ad.remat).

A call of a custom function under a trace is `jaxpr.custom_jvp_call` /
`jaxpr.custom_vjp_call` of the function's primal body. Its rules are traced only when a
differentiation needs them, as in JAX:

- staged inside a differentiation (grad, jvp, vjp, jacfwd, ...: mjax.ad.levels), the call
  traces custom_jvp's rule (custom_vjp's fwd) at once, as JAX's JVP trace calls it; the
  function itself is traced only by the rule's own call of it on the same arguments
  (JAX's order of side effects), and that trace is the op's primal body (for a rule that
  never makes that call: the rule's primal outputs);
- elsewhere (jit, vmap, eval_shape, ...) only the function is traced, and the op names
  its rules by a handle (passes/custom_rules.py) that the passes trace if a
  differentiation reaches the call;
- custom_vjp's bwd is traced by the passes, when transposing (an eager vjp: when its
  pullback is first called), seeing the residuals' values where JAX would.

Values the function or its rules close over become trailing operands of the op
(`num_consts`; JAX's closure conversion): what the traced functions capture, and for
rules traced later, the tracers their Python closures hold (a trace that has ended can no
longer be captured from).
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import itertools
import threading
import weakref
from typing import Any

import numpy as np

from mjax import lax
from mjax.base import trace_trees, tree_util
from mjax.ad import concrete, cotangent_types, eager_jvp, levels, rule_traces, symbolic_zeros
from mjax.ad.arguments import (cotangent_leaves, nondiff_positions, resolve_kwargs, split_static)
from mjax.ad.staging import (ShapedArrayArg, _is_inexact, _wraps, _zeros, put_back, set_apart)
from mjax.ad.symbolic_zeros import SymbolicZero
from mjax.tracing.core import (Tracer, aval_of_value, bind, current_trace, to_numpy,
                               with_argument_sources)
from mjax.dialect import context
from mjax.dialect.attributes import Symbol
from mjax.dialect.functions import lookup
from mjax.dialect.ops import transforms as T
from mjax.dialect.ops.structural import ConstantOp
from mjax.passes import custom_rules
from mjax.passes.ir_util import nested_ops
from mjax.tracing.primitive import tangent_aval
from mjax.tracing.staging import emit, emit_call, fresh_name, trace_function


# ---- helpers --------------------------------------------------------------------------------
def lax_convert(x, dtype):
    return lax.convert_element_type(x, dtype)


@dataclasses.dataclass
class CustomVJPPrimal:
    """A primal a custom_vjp forward rule receives with symbolic_zeros=True: its value,
    and whether a differentiation perturbs it. JAX: custom_derivatives.CustomVJPPrimal."""
    value: Any
    perturbed: bool


def _any_inexact(args) -> bool:
    return any(_is_inexact(aval_of_value(x)) for x in trace_trees.tree_leaves(args))


def _trace_into(module, body, args, base: str):
    """Traces body(*args) (ShapedArrayArg leaves) into `module` as a private function."""
    return trace_function(body, tuple(args), {}, name=fresh_name(module, base),
                          module=module, visibility="private")


def _abstract(avals):
    return [ShapedArrayArg(a) for a in avals]


def _mark(module, name: str, handle: str, part: str) -> None:
    custom_rules.mark(_function(module, name), handle, part)


def _function(module, name: str):
    return lookup(module, name)


class _Consts:
    """Values traced functions close over, merged by identity: trailing operands of the
    custom call (closure conversion, as JAX's custom_jvp `num_consts`)."""

    def __init__(self, *groups):
        self.values, self._pos = [], {}
        for group in groups:
            for v in group:
                if id(v) not in self._pos:
                    self._pos[id(v)] = len(self.values)
                    self.values.append(v)
        self.avals = [aval_of_value(v).strip_weak_type() for v in self.values]

    def __len__(self):
        return len(self.values)

    def same_as(self, captured) -> bool:
        return len(captured) == len(self.values) and all(
            a is b for a, b in zip(captured, self.values))

    def pick(self, captured, const_args):
        """The arguments a function that captured `captured` takes for them: its const
        argument, or a constant for a concrete value that is none (a rule traced later
        can close over values its function does not)."""
        out = []
        for v in captured:
            k = self._pos.get(id(v))
            out.append(const_args[k] if k is not None else _constant(v))
        return out

    def check_captures(self, traced, what: str) -> None:
        """A rule traced later may capture only the call's operands (and constants)."""
        for v in traced.captured:
            if isinstance(v, Tracer) and id(v) not in self._pos:
                raise NotImplementedError(
                    f"{what}, traced when a differentiation first needed it, uses a traced "
                    f"value {v} that the call does not pass along (one computed by the "
                    f"rule's Python code outside its arguments); pass it as an argument")


def _constant(value):
    arr = np.asarray(to_numpy(value))
    return bind(ConstantOp, value=arr)


_reachable = rule_traces.reachable     # (custom_vmap's rules use it too)


def _closed_over_tracers(*funs) -> list:
    """The tracers of live traces that Python functions `funs` close over (closure cells,
    bound objects, partials, through pytrees and nested functions): operands a rule traced
    later needs, since it cannot capture them once their trace has ended."""
    found, seen, visited = [], set(), set()

    def leaves_of(value, depth):
        try:
            leaves = trace_trees.tree_leaves(value)
        except Exception:   # noqa: BLE001 (an object pytrees cannot flatten: no tracers)
            return
        for leaf in leaves:
            if isinstance(leaf, Tracer):
                if leaf.trace.active and id(leaf) not in seen:
                    seen.add(id(leaf))
                    found.append(leaf)
            elif callable(leaf) and not isinstance(leaf, type):
                visit(leaf, depth + 1)

    def visit(fn, depth):
        if depth > 4 or id(fn) in visited:
            return
        visited.add(id(fn))
        if isinstance(fn, functools.partial):
            visit(fn.func, depth + 1)
            leaves_of((fn.args, fn.keywords), depth)
            return
        owner = getattr(fn, "__self__", None)
        if owner is not None and hasattr(owner, "__dict__") and not isinstance(owner, type):
            leaves_of(list(vars(owner).values()), depth)
        func = getattr(fn, "__func__", fn)
        for cell in getattr(func, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:      # (an empty cell)
                continue
            leaves_of(value, depth)
    for fn in funs:
        if fn is not None:
            visit(fn, 0)
    return found


# ---- one staged call -------------------------------------------------------------------------
class _Call:
    """One staged call of a custom function: what tracing its rules needs, now or later.
    The passes trace them through `trace` (passes/custom_rules.py)."""

    def __init__(self, custom, name, nd, full, dyn):
        self.custom = custom
        self.name, self.nd, self.full = name, nd, full
        leaves, self.tree = trace_trees.tree_flatten(tuple(dyn))
        self.arg_sizes = [len(trace_trees.tree_leaves(a)) for a in dyn]
        self.in_avals = [aval_of_value(x) for x in leaves]     # (weak types kept)
        self.t_avals = [a for a in self.in_avals if _is_inexact(a)]  # (weak too, as JAX's)
        self.out_tree = self.out_avals = None
        self.consts = _Consts()
        self.layout = None           # custom_vjp: (residual tree, residual avals) of fwd
        self.res_static = {}         # custom_vjp: fwd's Python-scalar residuals by leaf
        self.bwd_sources = None      # custom_vjp: (fwd's trace, root) for bwd's residuals
        self.ct_weak_hint = self.bwd_weak = None     # custom_vjp: mjax.ad.cotangent_types
        self.zero_outs: set = set()  # custom_jvp: outputs given symbolic zero tangents
        self.kept: dict = {}         # rules traced by the passes (mjax.ad.rule_traces)

    def stable_key(self):
        """What a program's text does not show of this call (mjax.ad.staging reuses compiled
        programs by it): the custom function and rules (identity, held weakly), equal static
        arguments, structures and avals; None if unsure. (What the rules close over shows in
        the text of rules traced while staging; a lowering that traces rules is not reused.)"""
        custom, nd = self.custom, tuple(self.nd)
        if any(isinstance(x, Tracer) for x in trace_trees.tree_leaves(nd)):
            return None
        try:
            key = (type(custom), *map(_weak, (custom, custom.fun, *custom._rules(),
                                             getattr(custom, "jvp_companion", None))),
                   bool(custom.symbolic_zeros), nd, tuple(map(type, nd)), self.tree,
                   tuple(self.in_avals), self.out_tree, tuple(self.out_avals or ()))
            hash(key)
        except TypeError:
            return None
        return key

    def args(self):
        """Abstract arguments of the function, in its argument structure."""
        return tree_util.tree_unflatten(self.tree, _abstract(self.in_avals))

    def trace(self, module, part: str) -> str:
        """Traces rule `part` ("jvp", "fwd", "bwd") into `module` (the passes need it), or
        copies in the one traced for this call before (mjax.ad.rule_traces); returns the
        function's name."""
        kind, zeros = custom_rules.split_part(part)

        def trace():
            later = {"bwd": "_later_bwd", "jvp": "_later_jvp"}.get(kind, "_later_fwd")
            with context(), levels.at(0), rule_traces.reachable(self.consts.values):
                return getattr(self.custom, later)(self, module, zeros)
        # (a bwd reading its residuals' values from fwd's trace is this call's only)
        return rule_traces.kept_or_traced(self.kept, module, part, trace,
                                          kind != "bwd" or self.bwd_sources is None)


def _weak(x):
    """A weak reference to x where its type takes one (equal while x lives), else x."""
    return weakref.ref(x) if type(x).__weakrefoffset__ else x


class _Slot:
    """A rule being traced for one call: its primal arguments, and the primal body traced
    by the rule's own call of the function on exactly those arguments."""

    __slots__ = ("custom", "nd", "tree", "args", "primal")

    def __init__(self, custom, nd, tree):
        self.custom, self.nd, self.tree, self.args, self.primal = custom, nd, tree, None, None

    def matches(self, custom, nd, tree, leaves) -> bool:
        return (self.custom is custom and self.primal is None and self.args is not None
                and self.tree == tree and len(self.args) == len(leaves)
                and all(a is b for a, b in zip(self.args, leaves))
                and len(self.nd) == len(nd) and all(a is b for a, b in zip(self.nd, nd)))


class _Slots(threading.local):
    def __init__(self):
        self.stack = []


_slots = _Slots()


@contextlib.contextmanager
def _rule_slot(slot):
    _slots.stack.append(slot)
    try:
        yield slot
    finally:
        _slots.stack.pop()


class _Primal:
    """A function of (argument leaves..., `captured`...) computing a call's results."""

    def __init__(self, name, captured, out_tree, out_avals):
        self.name, self.captured = name, list(captured)
        self.out_tree, self.out_avals = out_tree, out_avals

    def usable(self) -> bool:
        # (its captures must still be reachable from the trace that wants it)
        return all(not isinstance(v, Tracer) or v.trace.active for v in self.captured)


# Calls whose bwd may still read their fwd's residual values: the most recent ones keep
# the fwd trace alive (an eager vjp's pullback can be called long after).
_RECENT_BWD_SOURCES: collections.deque = collections.deque(maxlen=32)


def _remember_bwd_sources(call) -> None:
    if len(_RECENT_BWD_SOURCES) == _RECENT_BWD_SOURCES.maxlen:
        _RECENT_BWD_SOURCES[0].bwd_sources = None
    _RECENT_BWD_SOURCES.append(call)


class _CustomRules:
    """What custom_jvp and custom_vjp share: staging a call (see the module doc)."""

    kind = ""  # "jvp" or "vjp"
    stage_exact_calls = False   # (stage calls without inexact inputs: custom_vmap)

    def __init__(self, fun, nondiff_argnums=()):
        _wraps(fun)(self)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)

    def __getattr__(self, name):
        # (as JAX: `def*` methods of the function wrapped, e.g. custom_vmap's def_vmap)
        if name.startswith("def") and "fun" in vars(self):
            return getattr(self.fun, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _has_rules(self) -> bool:
        raise NotImplementedError

    def _rules(self) -> tuple:
        """The Python rules, for finding what their closures hold."""
        raise NotImplementedError

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", str(self.fun))
        if not self._has_rules():
            raise AttributeError(f"No {self.kind.upper()} defined for custom_{self.kind} "
                                 f"function {name} using def{self.kind}.")
        args = resolve_kwargs(self.fun, args, kwargs, self.kind)
        nd, dyn, full = split_static(args, self.nondiff_argnums)
        if not self.stage_exact_calls and not _any_inexact(dyn):
            return self.fun(*args)  # no input can carry a tangent: the rules never run
        if current_trace() is None:
            # Called outside every transformation (mjax's differentiate under a trace):
            # JAX then calls the function as it is (a Python float result stays one).
            return self.fun(*args)
        call = _Call(self, name, nd, full, dyn)
        leaves = trace_trees.tree_leaves(tuple(dyn))
        stack = _slots.stack
        slot = stack[-1] if stack and stack[-1].matches(self, nd, call.tree, leaves) else None
        level = levels.depth()
        symbolic_zeros.note_query()     # (how it is staged depends on the level)
        known = [symbolic_zeros.perturbation(x, level) for x in leaves] if level else []
        if any(p is True for p in known):
            perturbed = [p is not False for p in known]
            outs, primal = self._stage_differentiated(call, leaves, perturbed)
        else:      # (as JAX: a differentiation no input depends on never calls the rules)
            outs, primal = self._stage_plain(call, leaves)
        if slot is not None:
            slot.primal = primal     # the rule's own call: the outer call's primal body
        return outs

    # -- staging ------------------------------------------------------------------------
    def _stage_plain(self, call, leaves):
        """Outside differentiation: the function traced, its rules named by a handle."""
        module = current_trace().module
        f_tr = self._trace_primal(call, module, leaves)
        call.out_tree, call.out_avals = f_tr.out_tree, f_tr.out_avals
        call.consts = _Consts(f_tr.captured, _closed_over_tracers(*self._rules()))
        handle = self._handle(call)
        callee = self._primal_function(call, module, _Primal(
            f_tr.name, f_tr.captured, f_tr.out_tree, f_tr.out_avals))
        cls = T.CustomJvpCallOp if self.kind == "jvp" else T.CustomVjpCallOp
        outs = self._emit(call, leaves, cls, callee=Symbol(callee), rule=handle)
        return outs, _Primal(callee, call.consts.values, call.out_tree, call.out_avals)

    def _trace_primal(self, call, module, leaves):
        fun = concrete.with_sources(lambda *d: self.fun(*call.full(d)), list(leaves))
        with levels.at(0):     # (where the rule applies, the body is never differentiated)
            return _trace_into(module, fun, call.args(), call.name)

    def _primal_function(self, call, module, primal) -> str:
        """A function of (argument leaves, the call's consts) running `primal`."""
        if call.consts.same_as(primal.captured):
            return primal.name
        n, consts = len(call.in_avals), call.consts

        def f_body(*xs):
            return emit_call(primal.name, list(xs[:n]) + consts.pick(primal.captured, xs[n:]))
        return _trace_into(module, f_body, _abstract(call.in_avals + consts.avals),
                           call.name).name

    def _slot_primal(self, slot):
        primal = slot.primal
        return primal if primal is not None and primal.usable() else None

    def _emit(self, call, leaves, cls, **params):
        nc = len(call.consts)
        outs = emit(cls, list(leaves) + call.consts.values, num_consts=nc or None, **params)
        for t, a in zip(outs, call.out_avals):
            t.aval = a
        return tree_util.tree_unflatten(call.out_tree, outs)

    def _handle(self, call) -> str:
        """A new rule handle for `call`. Each staged call has its own, as JAX traces a
        rule each time a differentiation meets a call: the rule's own call of the
        function, differentiated again at a higher order, traces the rule again."""
        # (a call holding tracers keeps their traces alive: the module being traced)
        holds = any(isinstance(v, Tracer) for v in call.consts.values) or bool(
            _closed_over_tracers(self.fun))
        group = id(current_trace().module) if holds else None
        return custom_rules.register(call, f"{call.name}_{self.kind}", group)

    def _check_captures(self, call, traced, part):
        call.consts.check_captures(traced, f"the custom_{self.kind} {part} rule of "
                                           f"{call.name}")


class custom_jvp(_CustomRules):
    """A function with a user-defined JVP. JAX: jax.custom_jvp (defjvp, defjvps).

    Emits `jaxpr.custom_jvp_call @f {jvp = @g}` (the rule traced: inside a
    differentiation) or `{rule = "<handle>"}` (traced by the passes if needed). Values the
    function or its rule close over become extra operands (`num_consts`); differentiating
    with respect to them is an error, as in JAX."""

    kind = "jvp"

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def _has_rules(self):
        return self.jvp is not None

    def _rules(self):
        return (self.jvp,)

    def defjvp(self, jvp, symbolic_zeros=False):
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    symbolic_zeros = False

    def defjvps(self, *jvps):
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals, tangents):   # (JAX names it so: jaxprs print jvp=jvp)
            out = self(*primals)
            parts = [j(t, out, *primals) for j, t in zip(jvps, tangents) if j is not None]
            if not parts:
                total = trace_trees.tree_map(lambda o: _zeros(aval_of_value(o), False), out)
            else:
                total = trace_trees.tree_map(lambda *ts: functools.reduce(lambda a, b: a + b, ts),
                                           *parts)
            return out, total
        self.defjvp(jvp)

    def _rule_body(self, call, perturbed=None, eager=None):
        """The rule over flat (primals, tangents of the inexact ones) -> (outs, tangents
        of the inexact outs); sets call.out_tree / out_avals when not known yet, and
        `call.zero_outs` (the outputs whose tangent the rule gave as a symbolic zero).
        With symbolic_zeros, the inputs `perturbed` marks False (and the integer ones)
        get SymbolicZero tangents."""
        n, name = len(call.in_avals), call.name
        perturbed = perturbed or [True] * n
        symbolic = self.symbolic_zeros

        def tangent(a, t, p):
            if symbolic and not (p and _is_inexact(a)):
                return SymbolicZero(tangent_aval(a))
            return t if _is_inexact(a) else _zeros(a)

        def rule(*flat):
            t_iter = iter(flat[n:])
            t_leaves = [tangent(a, next(t_iter) if _is_inexact(a) else None, p)
                        for a, p in zip(call.in_avals, perturbed)]
            primals = tree_util.tree_unflatten(call.tree, flat[:n])
            tangents = tree_util.tree_unflatten(call.tree, t_leaves)
            out, tout = eager or self.jvp(*call.nd, tuple(primals), tuple(tangents))
            o_leaves, o_tree = trace_trees.tree_flatten(out)
            t_leaves, t_tree = trace_trees.tree_flatten(tout)
            want = call.out_tree if call.out_tree is not None else o_tree
            if o_tree != want or t_tree != want:
                raise TypeError(f"Custom JVP rule must produce primal and tangent outputs "
                                f"with equal container (pytree) structures, and equal to "
                                f"the output of the custom_jvp-decorated function {name}; "
                                f"got primal output {o_tree}, tangent output {t_tree} and "
                                f"function output {want}.")
            o_avals = [aval_of_value(o) for o in o_leaves]
            if call.out_avals is not None and [(a.shape, a.dtype) for a in o_avals] != [
                    (a.shape, a.dtype) for a in call.out_avals]:
                raise TypeError(f"Custom JVP rule of {name} must produce primal outputs "
                                f"with the shapes and dtypes of the function's outputs "
                                f"{[a.str_short() for a in call.out_avals]}, got "
                                f"{[a.str_short() for a in o_avals]}.")
            call.out_tree = o_tree
            call.zero_outs = {i for i, t in enumerate(t_leaves) if isinstance(t, SymbolicZero)}
            return list(o_leaves) + cotangent_types.jvp_tangents(t_leaves, o_avals, _zeros)
        return rule

    def _rule_function(self, call, module, g_tr) -> str:
        """The rule over (primals, consts, tangents, tangents of the inexact consts)."""
        consts = call.consts
        if not len(consts) and not g_tr.captured:
            return g_tr.name
        n, nc, nt = len(call.in_avals), len(consts), len(call.t_avals)
        c_tan = [a for a in consts.avals if _is_inexact(a)]

        def g_body(*xs):
            primals, cs, tangents = xs[:n], xs[n:n + nc], xs[n + nc:n + nc + nt]
            return emit_call(g_tr.name, list(primals) + list(tangents)
                             + consts.pick(g_tr.captured, cs))
        return _trace_into(module, g_body, _abstract(
            call.in_avals + consts.avals + call.t_avals + c_tan), f"{call.name}_jvp_rule").name

    def _stage_differentiated(self, call, leaves, perturbed):
        """Inside a differentiation: the rule traced now (JAX's JVP trace calls it)."""
        module = current_trace().module
        slot = _Slot(self, call.nd, call.tree)
        eager = eager_jvp.eager_rule(self, call, leaves, _closed_over_tracers)
        body, n = self._rule_body(call, perturbed, eager), len(call.in_avals)

        def rule(*flat):
            slot.args = flat[:n]
            out = body(*flat)
            slot.args = None    # (the rule trace's own tracers: not kept past its check)
            return out
        # The rule sees the primals' values where JAX would (not the tangents'); its
        # primal arguments stand for the call's operands (mjax.ad.symbolic_zeros).
        sources = list(leaves) + [None] * len(call.t_avals)
        rule = with_argument_sources(concrete.with_sources(rule, sources), sources)
        with _rule_slot(slot), levels.at(levels.depth() - 1):
            g_tr = _trace_into(module, rule, _abstract(call.in_avals + call.t_avals),
                               f"{call.name}_jvp_rule")
        call.out_avals = g_tr.out_avals[:call.out_tree.num_leaves]
        primal = self._slot_primal(slot)
        call.consts = _Consts(g_tr.captured, primal.captured if primal else ())
        g = self._rule_function(call, module, g_tr)
        custom_rules.mark_symbolic_zero_results(_function(module, g), call.zero_outs)
        if primal is not None:
            f = self._primal_function(call, module, primal)
        else:      # the rule never called the function: its primal outputs are the body
            f = self._projection(call, module, g)
        _mark(module, g, self._handle(call), "jvp")
        outs = self._emit(call, leaves, T.CustomJvpCallOp, callee=Symbol(f), jvp=Symbol(g))
        flat = trace_trees.tree_leaves(outs)
        symbolic_zeros.unperturbed(levels.depth(), [flat[i] for i in call.zero_outs])
        eager_jvp.note_results(flat, eager)     # (an eager jvp returns them as they are)
        return outs, _Primal(f, call.consts.values, call.out_tree, call.out_avals)

    def _projection(self, call, module, g) -> str:
        n_out = call.out_tree.num_leaves
        zeros = call.t_avals + [a for a in call.consts.avals if _is_inexact(a)]

        def f_body(*xs):
            return emit_call(g, list(xs) + [_zeros(a, False) for a in zeros])[:n_out]
        return _trace_into(module, f_body, _abstract(call.in_avals + call.consts.avals),
                           call.name).name

    def _later_jvp(self, call, module, zeros=()) -> str:
        """The rule, with symbolic zero tangents for the inputs numbered in `zeros`."""
        perturbed = [i not in zeros for i in range(len(call.in_avals))]
        g_tr = _trace_into(module, self._rule_body(call, perturbed),
                           _abstract(call.in_avals + call.t_avals), f"{call.name}_jvp_rule")
        self._check_captures(call, g_tr, "JVP")
        g = self._rule_function(call, module, g_tr)
        custom_rules.mark_symbolic_zero_results(_function(module, g), call.zero_outs)
        return g


class custom_vjp(_CustomRules):
    """A function with a user-defined VJP. JAX: jax.custom_vjp (defvjp).

    Emits `jaxpr.custom_vjp_call @f {fwd = @a, rule = "<handle>"}` inside a
    differentiation (fwd traced; bwd traced by the passes when transposing) or
    `{rule = "<handle>"}` elsewhere. Residuals may be any pytree. Values fun/fwd/bwd
    close over become extra operands (`num_consts`), which fwd passes on to bwd as extra
    residuals; differentiating with respect to them is an error, as in JAX."""

    kind = "vjp"

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        super().__init__(fun, nondiff_positions(fun, nondiff_argnums, nondiff_argnames))
        self.fwd = self.bwd = None

    def _has_rules(self):
        return self.fwd is not None

    def _rules(self):
        return (self.fwd, self.bwd)

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros = symbolic_zeros

    symbolic_zeros = False

    def _fwd_args(self, call, p, perturbed):
        """fwd's arguments: with symbolic_zeros, each leaf of the differentiable arguments
        a CustomVJPPrimal, perturbed as `perturbed` says (by the passes: every inexact)."""
        if not self.symbolic_zeros:
            return call.full(p)
        leaves, tree = trace_trees.tree_flatten(list(p))
        perturbed = perturbed or [True] * len(leaves)
        return call.full(tree_util.tree_unflatten(tree, [
            CustomVJPPrimal(x, bool(q and _is_inexact(aval_of_value(x))))
            for x, q in zip(leaves, perturbed)]))

    def _fwd_body(self, call, slot=None, perturbed=None):
        """fwd over the function's arguments -> flat (outs, residuals); records the output
        and residual structures on `call`."""
        name = call.name

        def fwd(*p):
            if slot is not None:
                slot.args = trace_trees.tree_leaves(p)
            got = self.fwd(*self._fwd_args(call, p, perturbed))
            if slot is not None:      # (as the jvp rule's: not kept past the trace)
                slot.args = None
            if not isinstance(got, (tuple, list)) or len(got) != 2:
                raise TypeError(f"Custom VJP fwd rule {getattr(self.fwd, '__name__', '')} "
                                f"for function {name} must produce a pair (list or tuple "
                                f"of length two) representing primal outputs and "
                                f"residuals (values stored from the forward pass for use "
                                f"on the backward pass), got {got}.")
            out, res = got
            o_leaves, o_tree = trace_trees.tree_flatten(out)
            want = call.out_tree if call.out_tree is not None else o_tree
            if o_tree != want:
                raise TypeError(f"Custom VJP fwd rule must produce a pair where the first "
                                f"element represents the primal output (equal to the "
                                f"output of the custom_vjp-decorated function {name}), "
                                f"but got primal output structure {o_tree} for function "
                                f"output structure {want}.")
            r_leaves, r_tree = trace_trees.tree_flatten(res)
            if call.layout is not None and r_tree != call.layout[0]:
                raise TypeError(f"Custom VJP fwd rule of {name} produced residuals of "
                                f"structure {r_tree}, traced before with {call.layout[0]}")
            # Python scalars among the residuals (flags, counts) stay Python values for
            # bwd, as JAX's bwd sees them known; the others are traced residuals.
            call.res_static, traced_res = set_apart(
                r_leaves, lambda x: isinstance(x, (bool, int, float, complex)))
            call.out_tree, call.res_tree = o_tree, r_tree
            return list(o_leaves) + traced_res
        return fwd

    def _fwd_function(self, call, module, a_tr) -> str:
        """fwd over (args, consts) -> (outs, residuals, consts): the consts go on to bwd
        as residuals, for bwd (traced later) may use them."""
        consts = call.consts
        if not len(consts) and not a_tr.captured:
            return a_tr.name
        n = len(call.in_avals)

        def a_body(*xs):
            res = emit_call(a_tr.name, list(xs[:n]) + consts.pick(a_tr.captured, xs[n:]))
            return list(res) + list(xs[n:])
        return _trace_into(module, a_body, _abstract(call.in_avals + consts.avals),
                           f"{call.name}_fwd").name

    def _traced_fwd(self, call, a_tr):
        n_out = call.out_tree.num_leaves
        call.out_avals = a_tr.out_avals[:n_out]
        res_avals = list(a_tr.out_avals[n_out:])
        if call.layout is None:
            call.layout = (call.res_tree, res_avals)
        elif [a.strip_weak_type() for a in res_avals] != [
                a.strip_weak_type() for a in call.layout[1]]:
            raise TypeError(f"Custom VJP fwd rule of {call.name} produced residuals of "
                            f"types {[a.str_short() for a in res_avals]}, traced before "
                            f"with {[a.str_short() for a in call.layout[1]]}")

    def _stage_differentiated(self, call, leaves, perturbed):
        """Inside a differentiation: fwd traced now (JAX's JVP trace runs it); bwd left to
        the passes, which trace it when transposing."""
        module = current_trace().module
        slot = _Slot(self, call.nd, call.tree)
        # fwd sees the primals' values where JAX would.
        fwd = with_argument_sources(concrete.with_sources(
            self._fwd_body(call, slot, perturbed), list(leaves), primal=True), list(leaves))
        with _rule_slot(slot), levels.at(levels.depth() - 1):
            a_tr = _trace_into(module, fwd, call.args(), f"{call.name}_fwd")
        self._traced_fwd(call, a_tr)
        primal = self._slot_primal(slot)
        call.consts = _Consts(a_tr.captured, primal.captured if primal else (),
                              _closed_over_tracers(self.bwd))
        a = self._fwd_function(call, module, a_tr)
        if primal is not None:
            f = self._primal_function(call, module, primal)
        else:      # fwd never called the function: its primal outputs are the body
            f = self._projection(call, module, a)
        root = concrete.current_root()
        if root is not None and not _expanded_in_place(a_tr):
            # bwd sees the residuals' values where JAX would, read from fwd's trace
            call.bwd_sources = (a_tr, root)
            _remember_bwd_sources(call)
        handle = self._handle(call)
        _mark(module, a, handle, "fwd")
        outs = self._emit(call, leaves, T.CustomVjpCallOp, callee=Symbol(f), fwd=Symbol(a),
                          rule=handle)
        return outs, _Primal(f, call.consts.values, call.out_tree, call.out_avals)

    def _projection(self, call, module, a) -> str:
        n_out = call.out_tree.num_leaves

        def f_body(*xs):
            return emit_call(a, list(xs))[:n_out]
        return _trace_into(module, f_body, _abstract(call.in_avals + call.consts.avals),
                           call.name).name

    def _later_fwd(self, call, module, zeros=()) -> str:
        """fwd, the inputs numbered in `zeros` unperturbed (`CustomVJPPrimal`)."""
        perturbed = [i not in zeros for i in range(len(call.in_avals))]
        a_tr = _trace_into(module, self._fwd_body(call, perturbed=perturbed), call.args(),
                           f"{call.name}_fwd")
        self._check_captures(call, a_tr, "VJP fwd")
        self._traced_fwd(call, a_tr)
        return self._fwd_function(call, module, a_tr)

    def _later_bwd(self, call, module, zero_cts=()) -> str:
        """bwd over (residuals, consts, cotangents); with symbolic_zeros, the cotangents
        numbered in `zero_cts` (and those of integer outputs) are SymbolicZero objects."""
        if call.layout is None:     # (fwd not traced in this process yet: its residuals)
            self._later_fwd(call, module)
        res_tree, res_avals = call.layout
        out_avals, name, nd = call.out_avals, call.name, call.nd
        hint = call.ct_weak_hint
        ct_avals = [a.strip_weak_type() for a in out_avals if _is_inexact(a)]
        if hint is not None and len(hint) == len(ct_avals):
            ct_avals = [a.update(weak_type=bool(w)) for a, w in zip(ct_avals, hint)]
        in_tree, n_args = call.tree, len(call.arg_sizes)

        symbolic = self.symbolic_zeros

        def ct_of(a, ct, k):
            if symbolic and (ct is None or k in zero_cts):
                return SymbolicZero(tangent_aval(a))
            return _zeros(a) if ct is None else ct

        def bwd(*flat):
            nres = len(res_avals)
            res = put_back(res_tree, call.res_static, flat[:nres])
            ct_iter, k = iter(flat[nres:]), itertools.count()
            cts = [ct_of(a, next(ct_iter), next(k)) if _is_inexact(a) else ct_of(a, None, -1)
                   for a in out_avals]
            got = self.bwd(*nd, res, tree_util.tree_unflatten(call.out_tree, cts))
            if isinstance(got, list):
                got = tuple(got)
            if not isinstance(got, tuple) or len(got) != n_args:
                got_tree = trace_trees.tree_structure(got)
                raise TypeError(f"Custom VJP bwd rule must produce an output with the "
                                f"same container (pytree) structure as the args tuple of "
                                f"the primal function, and in particular must produce a "
                                f"tuple of length equal to the number of arguments to "
                                f"the primal function, but got bwd output structure "
                                f"{got_tree} for primal input structure {in_tree}.")
            g_leaves = []
            for g, k in zip(got, call.arg_sizes):
                gl = cotangent_leaves(g, k)
                if len(gl) != k:
                    raise TypeError(f"Custom VJP bwd rule must produce an output with "
                                    f"the same container (pytree) structure as the args "
                                    f"tuple of the primal function; got {got} for primal "
                                    f"input structure {in_tree}.")
                g_leaves.extend(gl)
            cotangent_types.record_bwd(call, ct_avals, cts, g_leaves)
            cotangent_types.check_shapes(g_leaves, call.in_avals, in_tree)
            return [cotangent_types.input_cotangent(g, a, lax_convert, _zeros)
                    for g, a in zip(g_leaves, call.in_avals) if _is_inexact(a)]
        if call.bwd_sources is not None:
            # bwd sees the residuals' values where JAX would (not the cotangents').
            a_tr, root = call.bwd_sources
            n_out = call.out_tree.num_leaves
            bwd = concrete.with_sources(bwd, concrete.result_tracers(a_tr, n_out)
                                        + [None] * len(ct_avals), root=root)
        b_tr = _trace_into(module, bwd, _abstract(list(res_avals) + ct_avals),
                           f"{name}_bwd")
        self._check_captures(call, b_tr, "VJP bwd")
        consts = call.consts
        if not len(consts) and not b_tr.captured:
            return b_tr.name
        nres, nc = len(res_avals), len(consts)
        c_tan = [a for a in consts.avals if _is_inexact(a)]

        def b_body(*xs):
            res, cs, cts = xs[:nres], xs[nres:nres + nc], xs[nres + nc:]
            got = emit_call(b_tr.name, list(res) + list(cts) + consts.pick(b_tr.captured, cs))
            return list(got) + [_zeros(a, False) for a in c_tan]
        return _trace_into(module, b_body, _abstract(list(res_avals) + consts.avals
                                                     + ct_avals), f"{name}_bwd").name


_EXPANDED_IN_PLACE = frozenset({"jaxpr.jvp", "jaxpr.vjp", "jaxpr.linear_transpose",
                                "jaxpr.vmap", "jaxpr.checkify"})


def _expanded_in_place(traced) -> bool:
    """Whether the passes rewrite ops of `traced`'s function in place (transformation
    ops): its values could then not be read back later."""
    return any(op.name in _EXPANDED_IN_PLACE for op in nested_ops(traced.trace.func.operation))
