"""Reverse mode: `grad`, `value_and_grad` (`jaxpr.vjp @f`), and `vjp` / `linearize`,
whose returned functions run only the linear part on residuals saved by one forward pass."""
from __future__ import annotations

import functools

import numpy as np

import mjax.lax as lax
from mjax.specs import dtypes as _dt
from mjax.tracing import registration
from mjax.base import trace_trees, tree_util
from mjax.ad import concrete, grad_markers, levels
from mjax.ad.forward import _check_tangents, jvp
from mjax.ad.linear_split import _diff_results, _main_tree, _Split, forward_part  # noqa: F401
from mjax.ad.staging import (ShapedArrayArg, _AvalLeaf, _check_aux_pair, _check_callable,
                             _is_dynamic, _is_inexact, _jax_type,
                             _leaf_aval, _wraps, _zeros, put_back, python_scalar_leaves,
                             set_apart, stage_function, staged)
from mjax.tracing.core import Tracer, aval_of_value, current_trace, refuse_user_tracers
from mjax.dialect.attributes import Symbol
from mjax.dialect.functions import parse_module
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import RefAval
from mjax.dialect.values import set_bools
from mjax.specs.dtypes import hitype_rules
from mjax.tracing.hijax_lowering import CapturedHiError, has_hi, value_and_grad_hi, vjp_hi
from mjax.jit.jitted import Jitted
from mjax.lax.elementwise import as_array
from mjax.lax.sharding import pin_unreduced
from mjax.passes import PassError
from mjax.passes.weak_cotangents import WEAK_RESULTS, cotangent_weak_types
from mjax.arrays.placement import cotangent_in_memory
from mjax.passes.autodiff import trace_bwd_rules_now, vjp_functions
from mjax.passes.ir_util import functions_text
from mjax.passes.rules.control_flow_ad import WhileReverseError
from mjax.arrays.sharding_types import set_cotangent_types
from mjax.tracing.staging import call_args, emit, emit_call
from mjax.base.traceback_util import api_boundary


# ---- grad / value_and_grad ------------------------------------------------------------
def _argnums_tuple(argnums, nargs):
    """(whether argnums is one int, the argument indices in the order asked for)."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise TypeError(f"differentiating with respect to argnums={argnums} requires at "
                            f"least {max(nums) + 1} positional arguments to be passed by the "
                            f"caller, but got only {nargs} positional arguments.")
    nums = tuple(i % nargs for i in nums)
    if len(set(nums)) != len(nums):
        # JAX then calls the function with None in place of the repeated argument, which
        # fails in the function (a TypeError) for nearly every function.
        raise TypeError(f"argnums={argnums} names positional argument "
                        f"{next(i for i in nums if nums.count(i) > 1)} more than once; "
                        f"differentiating twice with respect to one argument is not "
                        f"supported (list each argument once)")
    return single, nums


def _check_input_dtype(aval, allow_int, holomorphic, what="grad"):
    if holomorphic:
        if not _dt.issubdtype(aval.dtype, np.complexfloating):
            raise TypeError(f"{what} with holomorphic=True requires inputs with complex "
                            f"dtype, but got {aval.dtype.name}.")
    elif type(aval) is RefAval and _dt.is_inexact(aval.dtype):
        raise _ref_primal_error(aval)      # (JAX 0.10.2's, as vjp's function raises)
    elif not _is_inexact(aval) and not allow_int:
        raise TypeError(f"{what} requires real- or complex-valued inputs (input dtype that "
                        f"is a sub-dtype of np.inexact), but got {aval.dtype.name}. If you "
                        f"want to use Boolean- or integer-valued inputs, use vjp or set "
                        f"allow_int to True.")


def _check_output_dtype(aval, holomorphic, what="grad"):
    name = aval.dtype.name
    if holomorphic:
        if not _dt.issubdtype(aval.dtype, np.complexfloating):
            raise TypeError(f"{what} with holomorphic=True requires outputs with complex "
                            f"dtype, but got {name}.")
    elif _dt.issubdtype(aval.dtype, np.complexfloating):
        raise TypeError(f"{what} requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {name}. For holomorphic "
                        f"differentiation, pass holomorphic=True. For differentiation of "
                        f"non-holomorphic functions involving complex outputs, use jax.vjp "
                        f"directly.")
    elif not _dt.is_float(aval.dtype):
        raise TypeError(f"{what} requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {name}. For differentiation of "
                        f"functions with integer outputs, use jax.vjp directly.")


def _leaf_ranges(args, nums):
    """Flat leaf indices of args[i] for each i in nums (args flattened with kwargs after)."""
    ranges, offset = {}, 0
    for i, a in enumerate(args):
        n = len(trace_trees.tree_leaves(a))
        ranges[i] = range(offset, offset + n)
        offset += n
    return [ranges[i] for i in nums]


def _bind_untraceable(fun, args, kwargs, nums):
    """(fun, args, kwargs) with the arguments outside argnums that hold values mjax cannot
    trace (callables, strings, ...: JAX's grad passes them through) bound into fun, and
    `()` (no leaves) in their place."""
    def untraceable(a):
        return any(not _is_dynamic(x) for x in trace_trees.tree_leaves(a))
    pos = {i for i, a in enumerate(args) if i not in nums and untraceable(a)}
    keys = {k for k, v in kwargs.items() if untraceable(v)}
    if not pos and not keys:
        return fun, args, kwargs
    given_args, given_kwargs = args, kwargs

    def bound(*a, **kw):
        full = [given_args[i] if i in pos else x for i, x in enumerate(a)]
        return fun(*full, **kw, **{k: given_kwargs[k] for k in keys})
    return (_wraps(fun)(bound), tuple(() if i in pos else a for i, a in enumerate(args)),
            {k: v for k, v in kwargs.items() if k not in keys})


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """Returns a function computing (fun(*args), grad of fun w.r.t. args[argnums]).
    JAX: jax.value_and_grad (whose reduce_axes is deprecated: non-empty raises)."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to grad is deprecated")
    _check_callable(fun)

    def value_and_grad_impl(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args))
        fun_, args, kwargs = _bind_untraceable(fun, args, kwargs, nums)
        leaves, _ = trace_trees.tree_flatten((args, kwargs))
        ranges = _leaf_ranges(args, nums)
        diff = sorted(i for r in ranges for i in r)   # gradients come back in argnums order
        in_avals = [aval_of_value(x) for x in leaves]
        for i in diff:
            _check_input_dtype(in_avals[i], allow_int, holomorphic)
        aux_objects = {}
        if has_aux:
            fun_ = _aux_objects_apart(fun_, aux_objects)
        traced = stage_function(fun_, args, kwargs,
                                concrete_leaves=python_scalar_leaves(args, kwargs, nums),
                                diff_leaves=[i for i in diff if _is_inexact(in_avals[i])])
        out_avals, out_tree = traced.out_avals, traced.out_tree
        main_tree = _check_aux_pair(out_tree, out_avals) if has_aux else out_tree
        if main_tree.num_leaves != 1 or not tree_util.treedef_is_leaf(main_tree) or \
                out_avals[0].shape != ():
            # JAX differentiates before it looks at the output: its errors come first.
            _raise_differentiation_error(traced, [i for i in diff if _is_inexact(in_avals[i])])
        if main_tree.num_leaves != 1 or not tree_util.treedef_is_leaf(main_tree):
            shown = tree_util.tree_unflatten(main_tree, [
                _AvalLeaf(a) for a in out_avals[:main_tree.num_leaves]])
            raise TypeError(f"Gradient only defined for scalar-output functions. Output was "
                            f"{shown}.")
        y = out_avals[0]
        if y.shape != ():
            raise TypeError(f"Gradient only defined for scalar-output functions. Output had "
                            f"shape: {y.shape}.")
        _check_output_dtype(y, holomorphic)
        # (the value as JAX's vjp computes it: custom_vjp functions by their fwd rules)
        outs = emit_call(forward_part(traced), call_args(traced, leaves), out_avals)
        diff_args = tuple(i for i in diff if _is_inexact(in_avals[i]))
        one = np.ones((), y.dtype)
        cts = emit(T.VjpOp, call_args(traced, leaves) + [one], callee=Symbol(traced.name),
                   diff_args=diff_args, diff_results=(0,))
        vjp_op = cts[0].value.owner.operation if cts else None
        set_cotangent_types([leaves[i] for i in diff_args], cts)   # ({U:X} of {R:X})
        cts = pin_unreduced(cts)
        ct_by_leaf = {}
        # (weak as JAX's backward pass makes them: mostly an input's own weak type)
        weak = cotangent_weak_types(traced.module, traced.name, traced.arg_avals +
                                    list(traced.capture_avals), diff_args,
                                    [y.weak_type] + [None] * (len(out_avals) - 1),
                                    _bwd_rules_now(traced, diff_args),
                                    eager=concrete.current_root() is not None)
        if any(weak) and vjp_op is not None:   # (for a differentiation around this one)
            set_bools(vjp_op, WEAK_RESULTS, weak)
        for i, ct, w in zip(diff_args, cts, weak):
            ct.aval = in_avals[i].update(weak_type=w)
            if not holomorphic and _dt.issubdtype(ct.aval.dtype, np.complexfloating):
                # except a complex one of a real function: JAX builds that cotangent from
                # real ones (`complex`, the transpose of real/imag/abs), never weak.
                ct.aval = ct.aval.strip_weak_type()
            ct_by_leaf[i] = cotangent_in_memory(leaves[i], ct)   # (its primal's memory)
        grads = []
        for i, r in zip(nums, ranges):
            flat = [ct_by_leaf[k] if k in ct_by_leaf else _zeros(in_avals[k]) for k in r]
            grads.append(tree_util.tree_unflatten(trace_trees.tree_structure(args[i]), flat))
        g = grads[0] if single else tuple(grads)
        value = tree_util.tree_unflatten(out_tree, outs)
        if has_aux:
            value = (value[0], put_back(aux_objects["tree"], aux_objects["objects"],
                                        value[1]))
        return (tuple(value), g) if has_aux else (value, g)

    run = staged(value_and_grad_impl,
                 diff_argnums=lambda n: set(_argnums_tuple(argnums, n)[1]) if n else set(),
                 concrete_root=True)

    @_wraps(fun)
    @api_boundary
    def value_and_grad_f(*args, **kwargs):
        if not hitype_rules or getattr(fun, "_mjax_hi_lowered", False):
            return run(*args, **kwargs)
        hi = (value_and_grad, fun, argnums, has_aux, dict(holomorphic=holomorphic,
              allow_int=allow_int), args, kwargs)    # (hijax values: mjax/hijax_lowering)
        if has_hi((args, kwargs)):
            return value_and_grad_hi(*hi)
        try:
            return run(*args, **kwargs)
        except CapturedHiError:
            return value_and_grad_hi(*hi)
    return value_and_grad_f


def _bwd_rules_now(traced, diff_args):
    """What traces the custom_vjp bwd rules grad's `jaxpr.vjp` of `traced` reaches, now
    (as JAX's grad runs them; cotangent_types asks when a rule's cotangent types decide
    the gradient's): outside other differentiations only (as `pullback`)."""
    if levels.depth():
        return None
    return functools.partial(trace_bwd_rules_now, traced.module, traced.name,
                             tuple(diff_args), (0,))


def _aux_objects_apart(fun, box: dict):
    """fun with the untraced leaves of its aux output (strings, callables, Python scalars,
    concrete arrays: JAX's grad and vjp pass them through as they are) left out of what
    it returns, and kept in `box`."""
    def apart(*args, **kwargs):
        out = fun(*args, **kwargs)
        if not isinstance(out, (list, tuple)) or len(out) != 2:
            return out      # (the aux-pair check reports it)
        leaves, box["tree"] = trace_trees.tree_flatten(out[1])
        box["objects"], traced = set_apart(leaves, lambda x: not isinstance(x, Tracer))
        return out[0], traced
    return _wraps(fun)(apart)


def _raise_differentiation_error(traced, diff_args):
    """Raises the error differentiating `traced` raises, if any: a pure_callback without
    a custom rule (JAX's ValueError), a user-defined rule's own error (equinox's
    nontraceable raises RuntimeError from its JVP rule); used on grad's error path only.
    (Other errors of the passes give way to grad's own.)"""
    module = parse_module(functions_text(traced.module, [traced.name]))
    results = tuple(j for j, a in enumerate(traced.out_avals) if _is_inexact(a))
    try:
        vjp_functions(module, traced.name, tuple(diff_args), results)
    except PassError as e:
        if isinstance(e, ValueError):
            raise


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """Gradient of a scalar-output function w.r.t. args[argnums]. JAX: jax.grad."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, reduce_axes)

    @_wraps(fun)
    @api_boundary
    def grad_f(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return grad_f


# ---- vjp and linearize: a forward part run once, a linear part run per call ----------
def pullback(callee: str, primals, cts, diff_args, diff_results):
    """`jaxpr.vjp @callee(primals, cts)`: the cotangents of @callee's `diff_args` at
    `primals` for `cts` of its `diff_results`, staged into the current trace by a
    function `vjp` returned. The custom_vjp bwd rules it reaches are traced now
    (trace_bwd_rules_now), as JAX runs them when a pullback is called: libraries call a
    pullback to observe that (equinox's checkpointed loops). Inside another
    differentiation, and for grad's `jaxpr.vjp`, they are left to the passes: the order
    of the rules' side effects under nested differentiation and checkpoint then stays
    JAX's (JAX's outer JVP may reject the call before bwd would run)."""
    if not levels.depth():
        trace_bwd_rules_now(current_trace().module, callee, diff_args, diff_results)
    return emit(T.VjpOp, list(primals) + list(cts), callee=Symbol(callee),
                diff_args=diff_args, diff_results=diff_results)


class _LinearFun:
    """The static part of the `tree_util.Partial` that vjp and linearize return: the
    Partial's children are the primal inputs (and values the function captured), so it
    can be passed to and returned from jit, as in JAX. Called with those and the user's
    cotangents (tangents), it runs the linear map: on the saved residuals when it holds
    the very inputs of an eager vjp, otherwise as `jaxpr.vjp` / `jaxpr.jvp` of the traced
    function (under a trace, or staged as a jit when called eagerly)."""

    def __init__(self, split: _Split, fun):
        self.kind, self.recipe = split.kind, split.recipe
        self.diff_args, self.diff_results = split.diff_args, split.diff_results
        self.ct_weak = split.ct_weak if split.kind == "vjp" else None
        self.in_tree, self.in_avals = split.in_tree, split.in_avals
        self.main_tree, self.n_results = split.main_tree, len(split.out_avals)
        self.out_avals = split.out_avals[:split.main_tree.num_leaves]
        self.n_args = len(split.args)
        self.fun_name = getattr(fun, "__name__", str(fun))
        self._eager = split if hasattr(split, "_entry") else None
        self._jitted = {}        # wanted diff_args -> the staged linear map
        self.jit_split = getattr(split, "jit_split", None)
        # An eager vjp's opaque residuals follow the arguments among the Partial's
        # children (JAX: VJP.opaque_residuals).
        self.n_opaque = len(split.opaque) if self._eager and self.kind == "vjp" else 0

    def __call__(self, *all_args, markers=None):
        """The linear map on `all_args` (the Partial's children, then the user's
        cotangents or tangents); `markers` (vjp only) says per input leaf what to do with
        its cotangent (with_refs)."""
        n = self.n_args + self.n_opaque
        args, opaque, user = all_args[:self.n_args], all_args[self.n_args:n], all_args[n:]
        if self.kind == "vjp":
            markers = markers or [grad_markers.GradValue()] * len(self.in_avals)
            want = tuple(i for i in self.diff_args
                         if not isinstance(markers[i], grad_markers.DontWant))
            refs = {i: markers[i] for i in want
                    if not isinstance(markers[i], grad_markers.GradValue)}
            inputs, in_avals, out_avals, seeds = self._vjp_inputs(user)
        else:
            want, refs = self.diff_args, None
            inputs, in_avals, out_avals = self._jvp_inputs(user)
        outs = self._run(list(args), list(opaque), inputs, in_avals, out_avals, want, refs)
        if self.kind == "vjp":
            # (the bwd rules just traced may have told their cotangents' weak types)
            weak = dict(zip(self.diff_args, self.ct_weak(seeds)))
            for o, i in zip(outs, want):
                if getattr(o, "aval", None) is not None and hasattr(o.aval, "weak_type"):
                    o.aval = o.aval.update(weak_type=weak[i])
            by = dict(zip(want, outs))
            flat = [_deliver(m, cotangent_in_memory(args[i], by[i]) if i in by else
                             _zeros(a)) for i, (m, a) in enumerate(zip(markers, self.in_avals))]
            return tree_util.tree_unflatten(self.in_tree, flat)
        by = dict(zip(self.diff_results, outs))
        flat = [by[j] if j in by else _zeros(a) for j, a in enumerate(self.out_avals)]
        return tree_util.tree_unflatten(self.main_tree, flat)

    def _vjp_inputs(self, user):
        if len(user) != 1:
            raise TypeError(
                f"The function returned by `jax.vjp` applied to {self.fun_name} was called "
                f"with {len(user)} arguments, but functions returned by `jax.vjp` must be "
                f"called with a single argument corresponding to the single value returned "
                f"by the function being differentiated (even if that returned value is a "
                f"tuple or other container).")
        leaves, tree = trace_trees.tree_flatten(user[0])
        if tree != self.main_tree:
            raise ValueError(f"unexpected tree structure of argument to vjp function: got "
                             f"{tree}, but expected to match {self.main_tree}")
        for c, a in zip(leaves, self.out_avals):
            ca = _leaf_aval(c)
            if ca is None or not _is_inexact(a):
                continue
            if ca.shape != a.shape or (ca.dtype != a.dtype and not ca.weak_type):
                raise ValueError(f"unexpected JAX type (e.g. shape/dtype) for argument to VJP "
                                 f"function: got {_jax_type(ca)}, but expected "
                                 f"{_jax_type(a)} because the corresponding output of the "
                                 f"differentiated function had JAX type {_jax_type(a)}")
        inputs = [lax.convert_element_type(leaves[j], self.out_avals[j].dtype)
                  if _leaf_aval(leaves[j]).dtype != self.out_avals[j].dtype else leaves[j]
                  for j in self.diff_results]
        in_avals = [self.out_avals[j] for j in self.diff_results]
        seeds = [_leaf_aval(leaves[j]).weak_type if _leaf_aval(leaves[j]) is not None
                 else False for j in self.diff_results]
        weak = self.ct_weak(seeds)
        out_avals = [self.in_avals[i].strip_weak_type().update(weak_type=w)
                     for i, w in zip(self.diff_args, weak)]
        return inputs, in_avals, out_avals, seeds

    def _jvp_inputs(self, tangents):
        t_leaves, t_tree = trace_trees.tree_flatten(tuple(tangents))
        if t_tree != self.in_tree:
            raise TypeError(f"expected {self.in_tree}, got {t_tree}")
        _check_tangents([ShapedArrayArg(a) for a in self.in_avals], t_leaves, "linearize")
        inputs = [t_leaves[i] for i in self.diff_args]
        in_avals = [self.in_avals[i].strip_weak_type() for i in self.diff_args]
        return inputs, in_avals, [self.out_avals[j] for j in self.diff_results]

    def _run(self, args, opaque, inputs, in_avals, out_avals, want, refs):
        """The outputs for the differentiated inputs in `want` (a subset of diff_args:
        vjp's others are not wanted; linearize's are all of them). A split jit's backward
        adds the cotangents `refs` take into them (GradRef() stands for those)."""
        eager = self._eager
        tracing = current_trace() is not None
        if eager is not None and self.kind == "vjp":    # (on its saved residuals)
            residuals = self._residuals(args, opaque)
            if not tracing:
                outs = eager.linear(inputs, in_avals, out_avals, residuals)
                return [o for i, o in zip(self.diff_args, outs) if i in want]
            if want == self.diff_args:      # (the bwd function on the residuals)
                self.recipe.callee_in(current_trace().module)
                bwd = f"{self.recipe.prefix}_{eager.linear_name}"
                return emit_call(bwd, residuals + list(inputs), out_avals)
        elif not tracing and eager is not None and len(args) == len(eager.args) and all(
                a is b for a, b in zip(args, eager.args)):
            return eager.linear(inputs, in_avals, out_avals)
        if self.kind == "vjp":
            if tracing and self.jit_split is not None and self.jit_split.usable() and all(
                    a is b for a, b in zip(args, self.jit_split.args)):
                by = self.jit_split.backward(inputs, self.diff_results, refs)
                outs = [by[i] if i in by else _zeros(a)
                        for i, a in zip(self.diff_args, out_avals) if i in want]
                for o, a in zip(outs, [a for i, a in zip(self.diff_args, out_avals)
                                       if i in want]):
                    if type(o) is not grad_markers.GradRef:
                        o.aval = a
                return outs
            out_avals = [a for i, a in zip(self.diff_args, out_avals) if i in want]
        if not tracing:     # e.g. returned from a jit: stage the linear map
            if want not in self._jitted:
                self._jitted[want] = Jitted(
                    lambda a, i: self._emit(a, i, out_avals, want))
            return self._jitted[want](args, list(inputs))
        return self._emit(args, inputs, out_avals, want)

    def _residuals(self, args, opaque) -> list:
        """The backward function's residuals: the arguments it passes through (args_res
        as they are now), and the opaque ones."""
        opaque = iter(opaque)
        return [args[k] if k is not None else next(opaque) for k in self._eager.res_spec]

    def _emit(self, args, inputs, out_avals, want):
        callee = self.recipe.callee_in(current_trace().module)
        if self.kind == "vjp":
            outs = pullback(callee, list(args), list(inputs), want, self.diff_results)
        else:
            outs = emit(T.JvpOp, list(args) + list(inputs), callee=Symbol(callee),
                        diff_args=self.diff_args, diff_results=self.diff_results
                        )[self.n_results:]
        for t, a in zip(outs, out_avals):
            t.aval = a
        return outs


def _deliver(marker, ct):
    """What the user gets for one input's cotangent under its with_refs marker."""
    if isinstance(marker, grad_markers.DontWant):
        return grad_markers.DidntWant()
    if isinstance(marker, grad_markers.GradValue) or type(ct) is grad_markers.GradRef:
        return ct       # (a value, or already added into the ref by a backward jit)
    registration.ACCUMULATE_INTO_REF(marker, ct)
    return grad_markers.GradRef()


class _LinearPartial(tree_util.Partial):
    """The Partial vjp and linearize return; flattening it (to cross a jit boundary)
    first freezes the traced function it calls. Its children are `args_res`, the primal
    arguments (assigning one, or all, replaces it for the next call), then, for an eager
    vjp, `opaque_residuals`: the residuals its forward pass computed, as JAX's VJP has
    them. The backward function reads each residual that is an argument passed through
    from args_res, so a new args_res changes the results that use it. (A vjp taken
    under a trace keeps no residuals: the linear map is derived there again, and CSE
    shares the forward work.)"""

    @property
    def opaque_residuals(self) -> list:
        n = getattr(self.func, "n_args", len(self.args))
        return list(self.args[n:n + getattr(self.func, "n_opaque", 0)])

    @property
    def args_res(self) -> list:
        n = self.func.in_tree.num_leaves
        return _ArgsRes(self, tree_util.tree_unflatten(self.func.in_tree, self.args[:n]))

    @args_res.setter
    def args_res(self, values):
        leaves, tree = trace_trees.tree_flatten(tuple(values))
        if tree != self.func.in_tree:
            raise ValueError(f"args_res must have the primal arguments' structure "
                             f"{self.func.in_tree}, got {tree}")
        n = self.func.in_tree.num_leaves
        args = tuple(leaves) + tuple(self.args[n:])
        self.__setstate__((self.func, args, self.keywords, self.__dict__ or None))

    def replace(self, *, args_res):
        """A copy with other args_res. JAX: VJP.replace."""
        new = _LinearPartial(self.func, *self.args, **self.keywords)
        new.args_res = args_res
        return new

    def with_refs(self, *maybe_ct_refs):
        """The VJP with one marker per primal leaf: a Ref (the cotangent is added into
        it), `ad.GradValue()` (returned) or `ad.DontWant()` (not computed). JAX:
        VJP.with_refs."""
        if self.func.kind != "vjp":
            raise AttributeError("'function returned by linearize' has no with_refs")
        markers, tree = trace_trees.tree_flatten(maybe_ct_refs)
        if tree != self.func.in_tree:
            raise ValueError(f"with_refs takes one marker (a Ref, ad.GradValue() or "
                             f"ad.DontWant()) per primal argument, structured as the "
                             f"primals {self.func.in_tree}; got {tree}")
        return functools.partial(self.func, *self.args, markers=markers, **self.keywords)


class _ArgsRes(list):
    """VJP.args_res: a list of the primal arguments whose item assignment writes back."""

    def __init__(self, owner, values):
        super().__init__(values)
        self._owner = owner

    def __setitem__(self, i, value):
        super().__setitem__(i, value)
        self._owner.args_res = list(self)


def _flatten_linear(p):
    if hasattr(p.func, "recipe"):
        p.func.recipe.freeze()
    return (p.args, p.keywords), p.func


tree_util.register_pytree_node(
    _LinearPartial, _flatten_linear,
    lambda func, children: _LinearPartial(func, *children[0], **children[1]))


@api_boundary
def vjp(fun, *primals, has_aux=False, reduce_axes=()):
    """(fun(*primals), vjp_fun[, aux]); vjp_fun (a `tree_util.Partial`, which jit can
    take and return) reuses the forward pass's residuals when called eagerly.
    JAX: jax.vjp (whose reduce_axes is deprecated: non-empty raises, as there)."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to vjp is deprecated")
    _check_callable(fun)
    if hitype_rules and has_hi(tuple(primals)):    # (hijax values: mjax/hijax_lowering)
        return vjp_hi(vjp, fun, primals, has_aux)
    leaves = trace_trees.tree_leaves(tuple(primals))
    refuse_user_tracers("vjp", leaves)
    avals = [aval_of_value(x) for x in leaves]
    diff_args = tuple(i for i, a in enumerate(avals) if _is_inexact(a))
    ref_primal = next((a for a in avals if type(a) is RefAval and _dt.is_inexact(a.dtype)),
                      None)
    if ref_primal is not None:
        return _vjp_raising(fun, primals, has_aux, lambda: _ref_primal_error(ref_primal))
    aux_objects: dict = {}
    user_fun = fun
    if has_aux:
        fun = _aux_objects_apart(fun, aux_objects)
    try:
        split = _Split(fun, primals, diff_args, has_aux, "vjp")
    except WhileReverseError as e:     # (JAX: raised by the pullback, not by vjp)
        primals = tree_util.tree_map(as_array, primals)  # (arrays, as JAX's tracers act)
        return _vjp_raising(user_fun, primals, has_aux, lambda err=e: err)
    out = tree_util.tree_unflatten(split.out_tree, split.outs)
    f = _LinearPartial(_LinearFun(split, fun), *split.args, *getattr(split, "opaque", ()))
    if has_aux:
        return out[0], f, put_back(aux_objects["tree"], aux_objects["objects"], out[1])
    return out, f


class _RaisingVjp:
    """The linear map of a vjp that cannot run: calling it raises `error()` (JAX runs
    the forward pass and raises when the pullback is called)."""
    kind = "vjp"

    def __init__(self, error, in_tree):
        self.error, self.in_tree = error, in_tree

    def __call__(self, *args, markers=None):
        raise self.error()


def _ref_primal_error(ref_aval) -> ValueError:
    return ValueError(f"Expected cotangent type {ref_aval} but got "
                      f"{ref_aval.inner_aval.strip_weak_type()}")


def _vjp_raising(fun, primals, has_aux, error):
    """vjp whose forward pass runs (writing any refs) and whose function raises `error()`
    when called: over a Ref primal, as JAX 0.10.2's; through a while loop."""
    out = fun(*primals)
    leaves, in_tree = trace_trees.tree_flatten(tuple(primals))
    f = _LinearPartial(_RaisingVjp(error, in_tree), *leaves)
    if has_aux:
        if not isinstance(out, (list, tuple)) or len(out) != 2:
            raise TypeError(f"expected function with aux output to return a two-element "
                            f"tuple, but got type {type(out)} with value {out}")
        return out[0], f, out[1]
    return out, f


@api_boundary
def linearize(fun, *primals, has_aux=False):
    """(fun(*primals), f_jvp[, aux]) where f_jvp(*tangents) is the JVP at primals.
    JAX: jax.linearize.

    The forward pass runs once; f_jvp (a `tree_util.Partial`) runs only the linear map
    (on saved residuals when called eagerly)."""
    _check_callable(fun)
    leaves = trace_trees.tree_leaves(tuple(primals))
    refuse_user_tracers("linearize", leaves)
    diff_args = tuple(i for i, x in enumerate(leaves) if _is_inexact(aval_of_value(x)))
    try:
        split = _Split(fun, primals, diff_args, has_aux, "linearize")
    except PassError:
        return _linearize_by_jvp(fun, primals, has_aux)
    out = tree_util.tree_unflatten(split.out_tree, split.outs)
    f_jvp = _LinearPartial(_LinearFun(split, fun), *split.args)
    return (out[0], f_jvp, out[1]) if has_aux else (out, f_jvp)


def _linearize_by_jvp(fun, primals, has_aux):
    """Fallback when the backward function cannot be transposed: each f_jvp call
    evaluates the JVP at the fixed primals."""
    zeros = [np.zeros(np.shape(p), _dt.float0) if not _is_inexact(aval_of_value(p))
             else _zeros(aval_of_value(p), False) for p in primals]
    out = jvp(fun, primals, zeros, has_aux=has_aux)

    def f_jvp(*tangents):
        return jvp(fun, primals, tangents, has_aux=has_aux)[1]
    return (out[0], f_jvp, out[2]) if has_aux else (out[0], f_jvp)
