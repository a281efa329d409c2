"""Automatic differentiation API (JAX's signatures), staged as transformation ops.

`grad(f)(x)` traces `f` once into a private `@f` of the module being built and emits
`jaxpr.vjp @f(x, 1.0)`; `value_and_grad` adds `jaxpr.call @f(x)`. The passes in
mjax.passes (`--jaxpr-expand-transforms`) turn these into plain ops when the module is
compiled, at any nesting depth. Called with no trace active, each API runs as a jit of
itself (traced and compiled once per argument shapes).

`vjp` and `linearize` split the work as JAX does: the forward part runs once and saves
residuals; the returned function runs only the linear part on them (for `linearize`,
the transpose of the backward function, so neither re-runs the forward pass).
"""
from __future__ import annotations

import functools
import inspect
import itertools

import numpy as np
from jaxlib.mlir import ir

from mjax import dtypes as _dt
from mjax import tree_util
from mjax.api import Jitted, trace_function
from mjax.core import Tracer, aval_of_value, current_trace, is_array_like, user_location
from mjax.dialect import Builder, context
from mjax.dialect.attributes import Symbol
from mjax.dialect.ops import transforms as T
from mjax.float0 import hide_float0 as _hide_float0, is_float0 as _is_float0
from mjax.float0 import restore_float0 as _restore_float0

_names = itertools.count()


# ---- staging helpers ------------------------------------------------------------------
def stage_function(fun, args, kwargs=None, name=None):
    """Traces fun(*args, **kwargs) into a private function of the current module."""
    outer = current_trace()
    base = name or getattr(fun, "__name__", "fn").strip("<>").replace(".", "_")
    return trace_function(fun, args, kwargs or {}, name=f"{base}_{next(_names)}",
                          module=outer.module, visibility="private")


def emit(cls, operands, **params):
    """Emits a transformation op into the current trace; returns its result tracers."""
    outer = current_trace()
    values = [outer.to_tracer(v) for v in operands]
    with context():
        b = Builder(outer.ip, user_location())
        results = T.emit_transform(b, cls, *[v.value for v in values], **params)
    return [Tracer(outer, r, _aval_of(r)) for r in results]


def emit_call(callee: str, operands, out_avals=None, cls=None, **params):
    """`jaxpr.call @callee(operands)` (or another call-like op); results get `out_avals`
    (which carry weak types) when given."""
    outs = emit(cls or T.CallOp, operands, callee=Symbol(callee), **params)
    if out_avals is not None:
        for t, a in zip(outs, out_avals):
            t.aval = a
    return outs


def _aval_of(value):
    from mjax.dialect import aval_of
    return aval_of(value.type)


def call_args(traced, leaves):
    """Operands of a call of `traced`: the argument leaves, then its captured values."""
    return list(leaves) + list(traced.captured)


def _is_dynamic(x) -> bool:
    return (hasattr(x, "aval") or is_array_like(x)) and not _is_float0(x)


def staged(impl):
    """Runs `impl` under the current trace, or as a jit of itself when none is active.

    Array leaves of the arguments are traced; other leaves (strings, callables, float0
    arrays, ...) are static, as `grad(f)(x, mode="a")` needs. float0 outputs come back
    as NumPy float0 arrays, as in JAX."""
    cache: dict = {}

    def make(tree, static, n):
        def flat_impl(*dyn):
            it = iter(dyn)
            fixed = dict(static)
            full = [_restore_float0(fixed[i]) if i in fixed else next(it) for i in range(n)]
            a, kw = tree_util.tree_unflatten(tree, full)
            return _hide_float0(impl(*a, **kw))
        flat_impl.__name__ = getattr(impl, "__name__", "staged")
        return Jitted(flat_impl)

    @functools.wraps(impl)
    def run(*args, **kwargs):
        if current_trace() is not None:
            return impl(*args, **kwargs)
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        dyn = [x for x in leaves if _is_dynamic(x)]
        static = tuple((i, _hide_float0(x)) for i, x in enumerate(leaves)
                       if not _is_dynamic(x))
        try:
            key = (tree, static)
            jitted = cache.get(key)
            if jitted is None:
                jitted = cache[key] = make(tree, static, len(leaves))
        except TypeError:  # an unhashable static leaf: no caching
            jitted = make(tree, static, len(leaves))
        return _restore_float0(jitted(*dyn))
    return run


def _is_inexact(aval):
    return _dt.is_inexact(aval.dtype)


def _zeros(aval, float0_for_int=True):
    import mjax.numpy as jnp
    if float0_for_int and not _is_inexact(aval):
        return np.zeros(aval.shape, _dt.float0)
    return jnp.zeros(aval.shape, aval.dtype)


def _leaf_aval(x):
    """The aval of a tangent/cotangent leaf, or None for float0."""
    return None if _is_float0(x) else aval_of_value(x)


def _jax_type(aval) -> str:
    """An aval as JAX's messages print it: float32[3]."""
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def _wraps(fun):
    """functools.wraps without copying fun's __dict__ (fun may be a jit object, whose
    attributes must not leak onto the wrapper)."""
    return functools.wraps(fun, assigned=("__module__", "__name__", "__qualname__",
                                          "__doc__"), updated=())


def _check_callable(fun):
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")


def _check_aux_pair(out_tree, out_avals):
    out = tree_util.tree_unflatten(out_tree, [_AvalLeaf(a) for a in out_avals])
    if not isinstance(out, tuple) or len(out) != 2:
        raise TypeError(f"expected function with aux output to return a two-element tuple, "
                        f"but got type {type(out)} with value {out}")
    return out_tree.children()[0]


class _AvalLeaf:
    """Shows an aval in error messages where JAX would show a tracer."""

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>"


# ---- grad / value_and_grad ------------------------------------------------------------
def _argnums_tuple(argnums, nargs):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise TypeError(f"differentiating with respect to argnums={argnums} requires at "
                            f"least {max(nums) + 1} positional arguments to be passed by the "
                            f"caller, but got only {nargs} positional arguments.")
    return single, tuple(i % nargs for i in nums)


def _check_input_dtype(aval, allow_int, holomorphic, what="grad"):
    if holomorphic:
        if not _dt.issubdtype(aval.dtype, np.complexfloating):
            raise TypeError(f"{what} with holomorphic=True requires inputs with complex "
                            f"dtype, but got {aval.dtype.name}.")
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
        n = len(tree_util.tree_leaves(a))
        ranges[i] = range(offset, offset + n)
        offset += n
    return [ranges[i] for i in nums]


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """Returns a function computing (fun(*args), grad of fun w.r.t. args[argnums]).
    JAX: jax.value_and_grad."""
    _check_callable(fun)

    def value_and_grad_impl(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args))
        leaves, _ = tree_util.tree_flatten((args, kwargs))
        ranges = _leaf_ranges(args, nums)
        diff = [i for r in ranges for i in r]
        in_avals = [aval_of_value(x) for x in leaves]
        for i in diff:
            _check_input_dtype(in_avals[i], allow_int, holomorphic)
        traced = stage_function(fun, args, kwargs)
        out_avals, out_tree = traced.out_avals, traced.out_tree
        main_tree = _check_aux_pair(out_tree, out_avals) if has_aux else out_tree
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
        outs = emit_call(traced.name, call_args(traced, leaves), out_avals)
        diff_args = tuple(i for i in diff if _is_inexact(in_avals[i]))
        one = np.ones((), y.dtype)
        cts = emit(T.VjpOp, call_args(traced, leaves) + [one], callee=Symbol(traced.name),
                   diff_args=diff_args, diff_results=(0,))
        ct_by_leaf = {}
        for i, ct in zip(diff_args, cts):
            ct.aval = in_avals[i]       # a weakly typed input has a weakly typed gradient
            ct_by_leaf[i] = ct
        grads = []
        for i, r in zip(nums, ranges):
            flat = [ct_by_leaf[k] if k in ct_by_leaf else _zeros(in_avals[k]) for k in r]
            grads.append(tree_util.tree_unflatten(tree_util.tree_structure(args[i]), flat))
        g = grads[0] if single else tuple(grads)
        value = tree_util.tree_unflatten(out_tree, outs)
        return (tuple(value), g) if has_aux else (value, g)

    run = staged(value_and_grad_impl)

    @_wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        return run(*args, **kwargs)
    return value_and_grad_f


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """Gradient of a scalar-output function w.r.t. args[argnums]. JAX: jax.grad."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @_wraps(fun)
    def grad_f(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return grad_f


# ---- jvp --------------------------------------------------------------------------------
def _check_tangents(p_leaves, t_leaves, what="jvp"):
    """JAX's checks that each tangent matches its primal (float0 for integer primals)."""
    for p, t in zip(p_leaves, t_leaves):
        pa, ta = aval_of_value(p), _leaf_aval(t)
        if ta is None:
            continue
        if what == "linearize":
            if pa.shape != ta.shape or (_is_inexact(pa) and pa.dtype != ta.dtype):
                raise ValueError(f"linearized function called on tangent values inconsistent "
                                 f"with the original primal values:\nGot tangent aval "
                                 f"{_jax_type(ta)} for primal aval {_jax_type(pa)} but "
                                 f"expected {_jax_type(pa)}.")
            continue
        if pa.shape != ta.shape:
            raise ValueError(f"jvp called with different primal and tangent shapes;Got primal "
                             f"shape {pa.shape} and tangent shape as {ta.shape}")
        if _is_inexact(pa) and pa.dtype != ta.dtype:
            raise TypeError(f"primal and tangent arguments to jax.jvp do not match; dtypes "
                            f"must be equal, or in case of int/bool primal dtype the tangent "
                            f"dtype must be float0.Got primal dtype {pa.dtype.name} and so "
                            f"expected tangent dtype {pa.dtype.name}, but got tangent dtype "
                            f"{ta.dtype.name} instead.")


def jvp(fun, primals, tangents, has_aux=False):
    """(fun(*primals), directional derivative along tangents). JAX: jax.jvp."""
    _check_callable(fun)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; "
                        f"found {type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(f"primal and tangent arguments to jax.jvp must have the same tree "
                        f"structure; primals have tree structure {p_tree} whereas tangents "
                        f"have tree structure {t_tree}.")
    _check_tangents(p_leaves, t_leaves)
    t_diff = [t for p, t in zip(p_leaves, t_leaves) if _is_inexact(aval_of_value(p))]

    def jvp_impl(p_leaves, t_diff):
        primals = tree_util.tree_unflatten(p_tree, p_leaves)
        traced = stage_function(fun, tuple(primals), {})
        in_avals = [aval_of_value(x) for x in p_leaves]
        diff_args = tuple(i for i, a in enumerate(in_avals) if _is_inexact(a))
        out_avals = traced.out_avals
        if has_aux:
            _check_aux_pair(traced.out_tree, out_avals)
        diff_results = tuple(j for j, a in enumerate(out_avals) if _is_inexact(a))
        res = emit(T.JvpOp, call_args(traced, p_leaves) + list(t_diff),
                   callee=Symbol(traced.name), diff_args=diff_args,
                   diff_results=diff_results)
        outs, touts = res[:len(out_avals)], res[len(out_avals):]
        for t, a in zip(outs, out_avals):
            t.aval = a
        for t, j in zip(touts, diff_results):
            t.aval = out_avals[j]
        tan_by = dict(zip(diff_results, touts))
        tangents_out = [tan_by[j] if j in tan_by else _zeros(a) for j, a in enumerate(out_avals)]
        out = tree_util.tree_unflatten(traced.out_tree, outs)
        tout = tree_util.tree_unflatten(traced.out_tree, tangents_out)
        if has_aux:
            return out[0], tout[0], out[1]
        return out, tout
    return staged(jvp_impl)(list(p_leaves), list(t_diff))


# ---- vjp and linearize: a forward part run once, a linear part run per call ----------
def _diff_results(traced, has_aux):
    n_main = (_check_aux_pair(traced.out_tree, traced.out_avals).num_leaves if has_aux
              else len(traced.out_avals))
    return tuple(j for j, a in enumerate(traced.out_avals[:n_main]) if _is_inexact(a))


def _main_tree(traced, has_aux):
    return traced.out_tree.children()[0] if has_aux else traced.out_tree


class _Split:
    """fun split in two: `run_once` (primal outputs + residuals) and `linear(residuals,
    inputs)` (the backward function for vjp; the transposed backward for linearize).
    Under a trace both are calls of derived functions of the module being built; eagerly
    they are two executables, and the residuals stay on the device between calls."""

    def __init__(self, fun, primals, diff_args, has_aux, kind):
        from mjax.passes.autodiff import vjp_functions
        self.leaves, self.in_tree = tree_util.tree_flatten(tuple(primals))
        self.in_avals = [aval_of_value(x) for x in self.leaves]
        self.diff_args = diff_args
        eager = current_trace() is None
        if eager:
            traced = trace_function(fun, tuple(primals), {}, name="f", visibility="private")
        else:
            traced = stage_function(fun, tuple(primals), {})
        self.traced = traced
        self.diff_results = _diff_results(traced, has_aux)
        module = traced.module
        with context(), ir.Location.unknown(context()):
            info = vjp_functions(module, traced.name, diff_args, self.diff_results)
            self.n_out = info.num_outputs
            if kind == "vjp":
                first, self.linear_name = info.fwd, info.bwd
            else:
                # The transpose of the backward function (linear in its cotangents) is the
                # forward linear map, and its residuals come from the residuals of f.
                nres = info.num_residuals
                lin = vjp_functions(module, info.bwd,
                                    tuple(range(nres, nres + len(self.diff_results))),
                                    tuple(range(len(diff_args))))
                first, self.linear_name = self._first_part(info, lin), lin.bwd
        if eager:
            self._compile(first)
        else:
            res = emit_call(first, call_args(traced, self.leaves))
            for t, a in zip(res, traced.out_avals):
                t.aval = a
            self.outs, self.residuals = res[:self.n_out], res[self.n_out:]

    def _first_part(self, info, lin) -> str:
        """A function x -> (f(x), residuals of the linear map): f's forward, then the
        forward of bwd's vjp at zero cotangents (its dead work is removed by DCE)."""
        import mjax.numpy as jnp
        traced = self.traced
        ins, _ = T.function_signature(traced.trace.func.operation)
        out_avals = traced.out_avals

        def first(*xs):
            res = emit_call(info.fwd, xs)
            zero_cts = [jnp.zeros(out_avals[j].shape, out_avals[j].dtype)
                        for j in self.diff_results]
            res2 = emit_call(lin.fwd, list(res[self.n_out:]) + zero_cts)
            return list(res[:self.n_out]) + list(res2[len(self.diff_args):])
        t = trace_function(first, tuple(ShapedArrayArg(a) for a in ins), {},
                           name=f"{traced.name}_linearize_{next(_names)}",
                           module=traced.module, visibility="private")
        return t.name

    def _compile(self, first):
        from mjax.array import Array
        from mjax.core import to_numpy
        from mjax.lowering import lower_to_stablehlo
        from mjax.runtime import get_backend
        traced = self.traced
        text = str(traced.module)

        def compile_entry(callee):
            with context(), ir.Location.unknown(context()):
                module = ir.Module.parse(text)
                _add_main(module, callee)
            return get_backend().compile(lower_to_stablehlo(module))

        first_exe = compile_entry(first)
        self._linear_exe = compile_entry(self.linear_name)
        bufs = [x._buf if isinstance(x, Array) else get_backend().put(to_numpy(x))
                for x in list(self.leaves) + list(traced.captured)]
        res = first_exe.execute(bufs)
        self.outs = [Array(b, a) for b, a in zip(res[:self.n_out], traced.out_avals)]
        self.residuals = res[self.n_out:]

    def linear(self, inputs, in_avals, out_avals):
        """Runs the linear part on the saved residuals and `inputs` (one per in_aval)."""
        if not hasattr(self, "_linear_exe"):
            outs = emit_call(self.linear_name, list(self.residuals) + list(inputs))
            for t, a in zip(outs, out_avals):
                t.aval = a
            return outs
        from mjax.array import Array
        from mjax.runtime import get_backend
        bufs = [x._buf if isinstance(x, Array) and x.dtype == a.dtype else
                get_backend().put(np.asarray(x, dtype=a.dtype)) for x, a in zip(inputs, in_avals)]
        return [Array(b, a) for b, a in zip(self._linear_exe.execute(list(self.residuals) + bufs),
                                             out_avals)]


class _VjpFun:
    """The function vjp returns: maps output cotangents to input cotangents using the
    residuals saved by the forward pass (the forward pass is not re-run)."""

    def __init__(self, split: _Split, out_tree, out_avals, fun):
        self._split = split
        self.out_tree, self.out_avals = out_tree, out_avals
        self._fun_name = getattr(fun, "__name__", str(fun))

    def __call__(self, *args):
        if len(args) != 1:
            raise TypeError(
                f"The function returned by `jax.vjp` applied to {self._fun_name} was called "
                f"with {len(args)} arguments, but functions returned by `jax.vjp` must be "
                f"called with a single argument corresponding to the single value returned "
                f"by the function being differentiated (even if that returned value is a "
                f"tuple or other container).")
        s = self._split
        leaves, tree = tree_util.tree_flatten(args[0])
        if tree != self.out_tree:
            raise ValueError(f"unexpected tree structure of argument to vjp function: got "
                             f"{tree}, but expected to match {self.out_tree}")
        for c, a in zip(leaves, self.out_avals):
            ca = _leaf_aval(c)
            if ca is None or not _is_inexact(a):
                continue
            if ca.shape != a.shape or (ca.dtype != a.dtype and not ca.weak_type):
                raise ValueError(f"unexpected JAX type (e.g. shape/dtype) for argument to VJP "
                                 f"function: got {_jax_type(ca)}, but expected "
                                 f"{_jax_type(a)} because the corresponding output of the "
                                 f"differentiated function had JAX type {_jax_type(a)}")
        import mjax.lax as lax
        ct_diff = [lax.convert_element_type(leaves[j], self.out_avals[j].dtype)
                   if _leaf_aval(leaves[j]).dtype != self.out_avals[j].dtype else leaves[j]
                   for j in s.diff_results]
        in_avals = [s.in_avals[i].strip_weak_type() for i in s.diff_args]
        cts_in = s.linear(ct_diff, [self.out_avals[j] for j in s.diff_results],
                          [a.update(weak_type=s.in_avals[i].weak_type)
                           for a, i in zip(in_avals, s.diff_args)])
        by = dict(zip(s.diff_args, cts_in))
        flat = [by[i] if i in by else _zeros(a) for i, a in enumerate(s.in_avals)]
        return tree_util.tree_unflatten(s.in_tree, flat)


def vjp(fun, *primals, has_aux=False):
    """(fun(*primals), vjp_fun[, aux]); vjp_fun reuses the forward pass's residuals.
    JAX: jax.vjp."""
    _check_callable(fun)
    leaves = tree_util.tree_leaves(tuple(primals))
    diff_args = tuple(i for i, x in enumerate(leaves) if _is_inexact(aval_of_value(x)))
    split = _Split(fun, primals, diff_args, has_aux, "vjp")
    traced = split.traced
    out = tree_util.tree_unflatten(traced.out_tree, split.outs)
    main_tree = _main_tree(traced, has_aux)
    f = _VjpFun(split, main_tree, traced.out_avals[:main_tree.num_leaves], fun)
    return (out[0], f, out[1]) if has_aux else (out, f)


def linearize(fun, *primals, has_aux=False):
    """(fun(*primals), f_jvp[, aux]) where f_jvp(*tangents) is the JVP at primals.
    JAX: jax.linearize.

    The forward pass runs once; f_jvp runs only the linear map, on saved residuals (the
    transpose of vjp's backward function)."""
    _check_callable(fun)
    from mjax.passes import PassError
    leaves, in_tree = tree_util.tree_flatten(tuple(primals))
    diff_args = tuple(i for i, x in enumerate(leaves) if _is_inexact(aval_of_value(x)))
    try:
        split = _Split(fun, primals, diff_args, has_aux, "linearize")
    except PassError:
        return _linearize_by_jvp(fun, primals, has_aux)
    traced = split.traced
    out = tree_util.tree_unflatten(traced.out_tree, split.outs)
    main_tree = _main_tree(traced, has_aux)
    out_avals = traced.out_avals[:main_tree.num_leaves]

    def f_jvp(*tangents):
        t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
        if t_tree != in_tree:
            raise TypeError(f"expected {in_tree}, got {t_tree}")
        _check_tangents(leaves, t_leaves, "linearize")
        t_diff = [t_leaves[i] for i in diff_args]
        t_out = split.linear(t_diff, [split.in_avals[i].strip_weak_type() for i in diff_args],
                             [out_avals[j] for j in split.diff_results])
        by = dict(zip(split.diff_results, t_out))
        flat = [by[j] if j in by else _zeros(a) for j, a in enumerate(out_avals)]
        return tree_util.tree_unflatten(main_tree, flat)
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


def _add_main(module, callee):
    """A public @main that calls @callee (so XLA has an entry point)."""
    from jaxlib.mlir.dialects import func
    from mjax.dialect import tensor_type
    table = ir.SymbolTable(module.operation)
    ins, outs = T.function_signature(table[callee].operation)
    with ir.InsertionPoint(module.body):
        f = func.FuncOp("main", ([tensor_type(a) for a in ins], [tensor_type(a) for a in outs]))
        block = f.add_entry_block()
    b = Builder(ir.InsertionPoint(block), ir.Location.unknown(context()))
    res = T.emit_transform(b, T.CallOp, *block.arguments, callee=Symbol(callee))
    func.ReturnOp(res, ip=ir.InsertionPoint(block))


# ---- jacobians ----------------------------------------------------------------------------
def _basis_rows(aval):
    """The standard basis of aval's space: an array of shape (size,) + aval.shape."""
    import mjax.numpy as jnp
    return jnp.reshape(jnp.eye(aval.size, dtype=aval.dtype), (aval.size,) + aval.shape)


def _stack_rows(rows, lead_shape, aval):
    """rows[e] (one per element of a value of shape lead_shape) -> lead_shape + aval.shape."""
    import mjax.numpy as jnp
    if not rows:
        return jnp.zeros(tuple(lead_shape) + aval.shape, aval.dtype)
    return jnp.reshape(jnp.stack(rows), tuple(lead_shape) + aval.shape)


def _select_args(fun, args, kwargs, nums):
    def f_sel(*xs):
        full = list(args)
        for i, x in zip(nums, xs):
            full[i] = x
        return fun(*full, **kwargs)
    return f_sel


def _jac_tree(out_tree, in_tree, blocks, single):
    """blocks[j][k]: d out leaf j / d in leaf k -> out structure outside, in inside."""
    per_out = []
    for row in blocks:
        inner = tree_util.tree_unflatten(in_tree, row)
        per_out.append(inner[0] if single else inner)
    return tree_util.tree_unflatten(out_tree, per_out)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """Jacobian by forward mode, one JVP per input element; output structure outside,
    input structure inside, output dims first. JAX: jax.jacfwd."""
    _check_callable(fun)
    import mjax.numpy as jnp

    def jacfwd_impl(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args))
        dyn = tuple(args[i] for i in nums)
        x_leaves, x_tree = tree_util.tree_flatten(dyn)
        x_avals = [aval_of_value(x).strip_weak_type() for x in x_leaves]
        for a in x_avals:
            if holomorphic:
                _check_input_dtype(a, False, True, "jacfwd")
            elif not _dt.is_float(a.dtype):
                raise TypeError(f"jacfwd requires real-valued inputs (input dtype that is a "
                                f"sub-dtype of np.floating), but got {a.dtype.name}. For "
                                f"holomorphic differentiation, pass holomorphic=True. For "
                                f"differentiation of non-holomorphic functions involving "
                                f"complex inputs or integer inputs, use jax.jvp directly.")
        traced = stage_function(_select_args(fun, args, kwargs, nums), dyn, {},
                                name=getattr(fun, "__name__", "jacfwd"))
        out_avals = traced.out_avals
        main_tree = _main_tree(traced, has_aux)
        if has_aux:
            _check_aux_pair(traced.out_tree, out_avals)
        n_main = main_tree.num_leaves
        if holomorphic:
            for a in out_avals[:n_main]:
                _check_output_dtype(a, True, "jacfwd")
        diff_results = tuple(j for j, a in enumerate(out_avals) if _is_inexact(a))
        operands = call_args(traced, x_leaves)
        zero = [jnp.zeros(a.shape, a.dtype) for a in x_avals]
        # columns[k][e]: tangent outputs for the e-th basis vector of input leaf k
        columns, outs = [], None
        for k, a in enumerate(x_avals):
            basis = _basis_rows(a)
            cols = []
            for e in range(a.size):
                tangents = list(zero)
                tangents[k] = basis[e]
                res = emit(T.JvpOp, operands + tangents, callee=Symbol(traced.name),
                           diff_results=diff_results)
                outs = res[:len(out_avals)]
                cols.append(dict(zip(diff_results, res[len(out_avals):])))
            columns.append(cols)
        if outs is None:  # no input elements at all
            outs = emit_call(traced.name, operands)
        for t, a in zip(outs, out_avals):
            t.aval = a
        blocks = []
        for j, ya in enumerate(out_avals[:n_main]):
            row = []
            for k, xa in enumerate(x_avals):
                if j not in diff_results:
                    row.append(np.zeros(ya.shape + xa.shape, _dt.float0))
                    continue
                J = _stack_rows([c[j] for c in columns[k]], xa.shape, ya)
                # x dims first -> y dims first
                row.append(jnp.moveaxis(J, tuple(range(xa.ndim)),
                                        tuple(range(ya.ndim, ya.ndim + xa.ndim))))
            blocks.append(row)
        jac = _jac_tree(main_tree, x_tree, blocks, single)
        if has_aux:
            return jac, tree_util.tree_unflatten(traced.out_tree, outs)[1]
        return jac
    run = staged(jacfwd_impl)

    @_wraps(fun)
    def jacfun(*args, **kwargs):
        return run(*args, **kwargs)
    return jacfun


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """Jacobian by reverse mode: one forward pass, one backward pass per output element;
    output structure outside, input structure inside. JAX: jax.jacrev."""
    _check_callable(fun)
    import mjax.numpy as jnp

    def jacrev_impl(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args))
        dyn = tuple(args[i] for i in nums)
        x_leaves, x_tree = tree_util.tree_flatten(dyn)
        x_avals = [aval_of_value(x).strip_weak_type() for x in x_leaves]
        for a in x_avals:
            _check_input_dtype(a, allow_int, holomorphic, "jacrev")
        res = vjp(_select_args(fun, args, kwargs, nums), *dyn, has_aux=has_aux)
        y, pullback = res[0], res[1]
        y_leaves, y_tree = tree_util.tree_flatten(y)
        y_avals = [aval_of_value(v).strip_weak_type() for v in y_leaves]
        for a in y_avals:
            _check_output_dtype(a, holomorphic, "jacrev")
        zero = [jnp.zeros(a.shape, a.dtype) for a in y_avals]
        blocks = []
        for j, ya in enumerate(y_avals):
            basis = _basis_rows(ya)
            rows = []
            for e in range(ya.size):
                cts = list(zero)
                cts[j] = basis[e]
                rows.append(tree_util.tree_leaves(pullback(
                    tree_util.tree_unflatten(y_tree, cts))))
            row = []
            for k, xa in enumerate(x_avals):
                if not _is_inexact(xa):   # allow_int: zeros of the input dtype, as JAX
                    row.append(jnp.zeros(ya.shape + xa.shape, xa.dtype))
                else:
                    row.append(_stack_rows([r[k] for r in rows], ya.shape, xa))
            blocks.append(row)
        jac = _jac_tree(y_tree, x_tree, blocks, single)
        return (jac, res[2]) if has_aux else jac
    run = staged(jacrev_impl)

    @_wraps(fun)
    def jacfun(*args, **kwargs):
        return run(*args, **kwargs)
    return jacfun


jacobian = jacrev


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """jacfwd(jacrev(fun)). JAX: jax.hessian."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


# ---- custom rules ---------------------------------------------------------------------------
class ShapedArrayArg:
    """An abstract argument for tracing: only its aval is known."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval


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


def _trace_wrapper(body, avals, name):
    """Traces body(*tracers) for abstract arguments `avals`; returns its function name."""
    return stage_function(body, tuple(ShapedArrayArg(a) for a in avals), {}, name=name).name


def _split_static(args, nondiff_argnums):
    static = {i: args[i] for i in nondiff_argnums}
    dyn = [a for i, a in enumerate(args) if i not in static]

    def full(dyn_args):
        it = iter(dyn_args)
        return [static[i] if i in static else next(it) for i in range(len(args))]
    return [static[i] for i in nondiff_argnums], dyn, full


class custom_jvp:
    """A function with a user-defined JVP. JAX: jax.custom_jvp (defjvp, defjvps).

    Emits `jaxpr.custom_jvp_call @f {jvp = @g}`. Values the function or its rule close
    over become extra operands (`num_consts`); differentiating with respect to them is an
    error, as in JAX."""

    def __init__(self, fun, nondiff_argnums=()):
        _wraps(fun)(self)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None
        self._in_rule = 0

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

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", str(self.fun))
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using "
                                 f"defjvp.")
        args = _resolve_kwargs(self.fun, args, kwargs)
        if self._in_rule:
            # Called from inside its own rule (as in `return f(x), t`): a plain call.
            return self.fun(*args)
        nd, dyn, full = _split_static(args, self.nondiff_argnums)

        def custom_jvp_impl(*dyn_args):
            leaves = tree_util.tree_leaves(dyn_args)
            p_tree = tree_util.tree_structure(tuple(dyn_args))
            in_avals = [aval_of_value(x).strip_weak_type() for x in leaves]
            t_avals = [a for a in in_avals if _is_inexact(a)]
            f_tr = stage_function(lambda *d: self.fun(*full(d)), dyn_args, {}, name=name)
            out_avals = f_tr.out_avals

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
            self._in_rule += 1
            try:
                g_tr = stage_function(rule, tuple(ShapedArrayArg(a)
                                                  for a in in_avals + t_avals), {},
                                      name=f"{name}_jvp_rule")
            finally:
                self._in_rule -= 1
            consts = _Consts(f_tr, g_tr)
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
                f_name = _trace_wrapper(f_body, in_avals + consts.avals, name)
                g_name = _trace_wrapper(g_body, in_avals + consts.avals + t_avals + c_tan,
                                        f"{name}_jvp_rule")
                outs = emit(T.CustomJvpCallOp, list(leaves) + consts.values,
                            callee=Symbol(f_name), jvp=Symbol(g_name), num_consts=nc)
            for t, a in zip(outs, out_avals):
                t.aval = a
            return tree_util.tree_unflatten(f_tr.out_tree, outs)
        return staged(custom_jvp_impl)(*dyn)


class custom_vjp:
    """A function with a user-defined VJP. JAX: jax.custom_vjp (defvjp).

    Emits `jaxpr.custom_vjp_call @f {fwd = @a, bwd = @b}`; residuals may be any pytree.
    Values fun/fwd/bwd close over become extra operands (`num_consts`; bwd receives the
    ones it uses as extra residuals); differentiating with respect to them is an error,
    as in JAX."""

    def __init__(self, fun, nondiff_argnums=()):
        _wraps(fun)(self)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None
        self._in_rule = 0

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", str(self.fun))
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using "
                                 f"defvjp.")
        args = _resolve_kwargs(self.fun, args, kwargs)
        if self._in_rule:
            return self.fun(*args)   # called from its own fwd rule: a plain call
        nd, dyn, full = _split_static(args, self.nondiff_argnums)

        def custom_vjp_impl(*dyn_args):
            leaves = tree_util.tree_leaves(dyn_args)
            in_tree = tree_util.tree_structure(tuple(dyn_args))
            in_avals = [aval_of_value(x).strip_weak_type() for x in leaves]
            f_tr = stage_function(lambda *d: self.fun(*full(d)), dyn_args, {}, name=name)
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
            self._in_rule += 1
            try:
                a_tr = stage_function(fwd_flat, dyn_args, {}, name=f"{name}_fwd")
            finally:
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
            b_tr = stage_function(bwd_flat, tuple(ShapedArrayArg(a)
                                                  for a in res_avals + ct_avals), {},
                                  name=f"{name}_bwd")
            consts = _Consts(f_tr, a_tr, b_tr)
            if not len(consts):
                outs = emit(T.CustomVjpCallOp, leaves, callee=Symbol(f_tr.name),
                            fwd=Symbol(a_tr.name), bwd=Symbol(b_tr.name))
            else:
                n, nc = len(leaves), len(consts)
                b_consts = [consts.avals[consts._pos[id(v)]] for v in b_tr.captured]

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
                f_name = _trace_wrapper(f_body, in_avals + consts.avals, name)
                a_name = _trace_wrapper(a_body, in_avals + consts.avals, f"{name}_fwd")
                b_name = _trace_wrapper(b_body, res_avals + b_consts + ct_avals,
                                        f"{name}_bwd")
                outs = emit(T.CustomVjpCallOp, list(leaves) + consts.values,
                            callee=Symbol(f_name), fwd=Symbol(a_name), bwd=Symbol(b_name),
                            num_consts=nc)
            for t, a in zip(outs, out_avals):
                t.aval = a
            return tree_util.tree_unflatten(f_tr.out_tree, outs)
        return staged(custom_vjp_impl)(*dyn)


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    """Marks fun for rematerialization: reverse mode recomputes its forward pass in the
    backward pass instead of saving residuals (visible as `jaxpr.checkpoint` in the IR).
    JAX: jax.checkpoint."""
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(
        static_argnums)

    @_wraps(fun)
    def remat_f(*args, **kwargs):
        static, dyn, full = _split_static(args, static_argnums)

        def checkpoint_impl(*a, **kw):
            traced = stage_function(lambda *d, **k: fun(*full(d), **k), a, kw,
                                    name=getattr(fun, "__name__", "checkpoint"))
            leaves = tree_util.tree_leaves((a, kw))
            outs = emit_call(traced.name, call_args(traced, leaves), traced.out_avals,
                             cls=T.CheckpointOp, prevent_cse=bool(prevent_cse))
            return tree_util.tree_unflatten(traced.out_tree, outs)
        return staged(checkpoint_impl)(*dyn, **kwargs)
    return remat_f


remat = checkpoint
