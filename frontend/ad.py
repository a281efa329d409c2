"""Automatic differentiation API (JAX's signatures), staged as transformation ops.

`grad(f)(x)` traces `f` once into a private `@f` of the module being built and emits
`jaxpr.vjp @f(x, 1.0)`; `value_and_grad` adds `jaxpr.call @f(x)`. The passes in
mjax.passes (`--jaxpr-expand-transforms`) turn these into plain ops when the module is
compiled, at any nesting depth. Called with no trace active, each API runs as a jit of
itself (traced and compiled once per argument shapes).
"""
from __future__ import annotations

import functools
import itertools

import numpy as np
from jaxlib.mlir import ir

from mjax import dtypes as _dt
from mjax import tree_util
from mjax.api import Jitted, trace_function
from mjax.core import Tracer, aval_of_value, current_trace, user_location
from mjax.dialect import Builder, context
from mjax.dialect.attributes import Symbol
from mjax.dialect.ops import transforms as T

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


def _aval_of(value):
    from mjax.dialect import aval_of
    return aval_of(value.type)


def call_args(traced, leaves):
    """Operands of a call of `traced`: the argument leaves, then its captured values."""
    return list(leaves) + list(traced.captured)


def staged(impl):
    """Runs `impl` under the current trace, or as a jit of itself when none is active."""
    jitted = Jitted(impl)

    @functools.wraps(impl)
    def run(*args, **kwargs):
        if current_trace() is not None:
            return impl(*args, **kwargs)
        return jitted(*args, **kwargs)
    return run


def _is_inexact(aval):
    return _dt.is_inexact(aval.dtype)


def _zeros(aval, float0_for_int=True):
    import mjax.numpy as jnp
    if float0_for_int and not _is_inexact(aval):
        return np.zeros(aval.shape, _dt.float0)
    return jnp.zeros(aval.shape, aval.dtype)


# ---- grad / value_and_grad ------------------------------------------------------------
def _argnums_tuple(argnums, nargs):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise TypeError(f"differentiating with respect to argnums={argnums} requires at "
                            f"least {max(nums) + 1} positional arguments, got {nargs}")
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


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """Returns a function computing (fun(*args), grad of fun w.r.t. args[argnums])."""
    if not callable(fun):
        raise TypeError(f"value_and_grad requires a callable, got {fun}")

    def impl(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args))
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        # Which flat leaves belong to args[argnums]?
        diff, offset = [], 0
        for i, a in enumerate(args):
            n = len(tree_util.tree_leaves(a))
            if i in nums:
                diff.extend(range(offset, offset + n))
            offset += n
        in_avals = [aval_of_value(x) for x in leaves]
        for i in diff:
            _check_input_dtype(in_avals[i], allow_int, holomorphic)
        traced = stage_function(fun, args, kwargs)
        out_avals = traced.out_avals
        out_tree = traced.out_tree
        if has_aux:
            if out_tree.num_children != 2 or not tree_util.treedef_is_leaf(
                    out_tree.children()[0]):
                raise TypeError("value_and_grad with has_aux=True requires fun to return a "
                                "(scalar output, auxiliary data) pair")
        elif out_tree.num_leaves != 1 or not tree_util.treedef_is_leaf(out_tree):
            raise TypeError(f"Gradient only defined for scalar-output functions. Output was "
                            f"{tree_util.tree_unflatten(out_tree, out_avals)}.")
        y = out_avals[0]
        if y.shape != ():
            raise TypeError(f"Gradient only defined for scalar-output functions. Output had "
                            f"shape: {y.shape}.")
        if not holomorphic and not _dt.is_float(y.dtype):
            raise TypeError(f"grad requires real-valued outputs (output dtype that is a "
                            f"sub-dtype of np.floating), but got {y.dtype.name}. For "
                            f"holomorphic differentiation, pass holomorphic=True. For "
                            f"differentiation of non-holomorphic functions involving complex "
                            f"outputs, use jax.vjp directly.")
        outs = emit(T.CallOp, call_args(traced, leaves), callee=Symbol(traced.name))
        for t, a in zip(outs, out_avals):
            t.aval = a
        diff_args = tuple(i for i in diff if _is_inexact(in_avals[i]))
        one = np.ones((), y.dtype)
        cts = emit(T.VjpOp, call_args(traced, leaves) + [one], callee=Symbol(traced.name),
                   diff_args=diff_args, diff_results=(0,))
        ct_by_leaf = dict(zip(diff_args, cts))
        grads_flat = [ct_by_leaf[i] if i in ct_by_leaf else _zeros(in_avals[i]) for i in diff]
        grads, pos = [], 0
        for i in nums:
            n = len(tree_util.tree_leaves(args[i]))
            grads.append(tree_util.tree_unflatten(tree_util.tree_structure(args[i]),
                                                  grads_flat[pos:pos + n]))
            pos += n
        g = grads[0] if single else tuple(grads)
        value = tree_util.tree_unflatten(out_tree, outs)
        if has_aux:
            return (value[0], value[1]), g
        return value, g

    run = staged(impl)

    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        return run(*args, **kwargs)
    return value_and_grad_f


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """Gradient of a scalar-output function w.r.t. args[argnums]. JAX: jax.grad."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        (value, g) = vg(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g
    return grad_f


# ---- jvp --------------------------------------------------------------------------------
def jvp(fun, primals, tangents, has_aux=False):
    """(fun(*primals), directional derivative along tangents). JAX: jax.jvp."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; "
                        f"found {type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(f"primal and tangent arguments to jax.jvp must have the same tree "
                        f"structure; primals have tree structure {p_tree} whereas tangents "
                        f"have tree structure {t_tree}.")
    for p, t in zip(p_leaves, t_leaves):
        pa, ta = aval_of_value(p), aval_of_value(t) if not (
            isinstance(t, np.ndarray) and t.dtype == _dt.float0) else None
        if ta is None:
            continue
        if pa.shape != ta.shape or (_is_inexact(pa) and pa.dtype != ta.dtype):
            raise TypeError(f"primal and tangent arguments to jax.jvp do not match; dtypes "
                            f"must be equal, or in case of int/bool primal dtype the tangent "
                            f"dtype must be float0. Got primal dtype {pa.dtype.name} and so "
                            f"expected tangent dtype {pa.dtype.name}, but got tangent dtype "
                            f"{ta.dtype.name} (shapes {pa.shape} and {ta.shape}).")
    t_diff = [t for p, t in zip(p_leaves, t_leaves) if _is_inexact(aval_of_value(p))]
    return _jvp_staged(fun, has_aux)(p_leaves, t_diff, p_tree)


def _jvp_staged(fun, has_aux):
    def impl(p_leaves, t_diff, p_tree):
        primals = tree_util.tree_unflatten(p_tree, p_leaves)
        traced = stage_function(fun, tuple(primals), {})
        in_avals = [aval_of_value(x) for x in p_leaves]
        diff_args = tuple(i for i, a in enumerate(in_avals) if _is_inexact(a))
        out_avals = traced.out_avals
        n_main = out_avals
        diff_results = tuple(j for j, a in enumerate(out_avals) if _is_inexact(a))
        res = emit(T.JvpOp, call_args(traced, p_leaves) + list(t_diff),
                   callee=Symbol(traced.name), diff_args=diff_args,
                   diff_results=diff_results)
        outs, touts = res[:len(out_avals)], res[len(out_avals):]
        for t, a in zip(outs, out_avals):
            t.aval = a
        tan_by = dict(zip(diff_results, touts))
        tangents_out = [tan_by[j] if j in tan_by else _zeros(a) for j, a in enumerate(n_main)]
        out = tree_util.tree_unflatten(traced.out_tree, outs)
        tout = tree_util.tree_unflatten(traced.out_tree, tangents_out)
        if has_aux:
            return out[0], tout[0], out[1]
        return out, tout
    return _run_staged(impl)


def _run_staged(impl):
    def run(*args):
        if current_trace() is not None:
            return impl(*args)
        p_tree = args[-1]
        return Jitted(lambda *a: impl(*a, p_tree))(*args[:-1])
    return run


def linearize(fun, *primals, has_aux=False):
    """(fun(*primals), f_jvp) where f_jvp(*tangents) is the JVP at primals. JAX: linearize.

    The tangent map is evaluated by the staged JVP at the fixed primals."""
    out = jvp(fun, primals, [_zeros(aval_of_value(p), False) if _is_inexact(aval_of_value(p))
                             else np.zeros(np.shape(p), _dt.float0)
                             for p in primals], has_aux=has_aux)

    def f_jvp(*tangents):
        return jvp(fun, primals, tangents, has_aux=has_aux)[1]
    return (out[0], f_jvp, out[2]) if has_aux else (out[0], f_jvp)


# ---- vjp ---------------------------------------------------------------------------------
class _VjpFun:
    """The function vjp returns: maps output cotangents to input cotangents using the
    residuals saved by the forward pass (the forward pass is not re-run)."""

    def __init__(self, run_bwd, out_tree, out_avals, in_tree, in_avals, diff_args,
                 diff_results):
        self._run_bwd = run_bwd
        self.out_tree, self.out_avals = out_tree, out_avals
        self.in_tree, self.in_avals = in_tree, in_avals
        self.diff_args, self.diff_results = diff_args, diff_results

    def __call__(self, *cts):
        ct = cts[0] if len(cts) == 1 else cts
        leaves, tree = tree_util.tree_flatten(ct)
        if tree != self.out_tree:
            raise TypeError(f"Tree structure of cotangent input {tree}, does not match "
                            f"structure of primal output {self.out_tree}.")
        for c, a in zip(leaves, self.out_avals):
            ca = aval_of_value(c) if not (isinstance(c, np.ndarray) and c.dtype == _dt.float0) \
                else None
            if ca is not None and (ca.shape != a.shape) and _is_inexact(a):
                raise ValueError(f"Shape of cotangent input to vjp pullback function "
                                 f"{ca.shape} must be the same as the shape of corresponding "
                                 f"primal input {a.shape}.")
        ct_diff = [leaves[j] for j in self.diff_results]
        cts_in = self._run_bwd(ct_diff)
        by = dict(zip(self.diff_args, cts_in))
        flat = [by[i] if i in by else _zeros(a) for i, a in enumerate(self.in_avals)]
        return tree_util.tree_unflatten(self.in_tree, flat)


def vjp(fun, *primals, has_aux=False):
    """(fun(*primals), vjp_fun[, aux]); vjp_fun reuses the forward pass's residuals."""
    from mjax.passes.autodiff import vjp_functions
    leaves, in_tree = tree_util.tree_flatten(tuple(primals))
    in_avals = [aval_of_value(x) for x in leaves]
    diff_args = tuple(i for i, a in enumerate(in_avals) if _is_inexact(a))
    outer = current_trace()
    if outer is not None:
        traced = stage_function(fun, tuple(primals), {})
        out_avals = traced.out_avals
        diff_results = _diff_results(traced, has_aux)
        with context(), ir.Location.unknown(context()):
            info = vjp_functions(outer.module, traced.name, diff_args, diff_results)
        res = emit(T.CallOp, call_args(traced, leaves), callee=Symbol(info.fwd))
        outs, residuals = res[:info.num_outputs], res[info.num_outputs:]
        for t, a in zip(outs, out_avals):
            t.aval = a

        def run_bwd(ct_diff):
            return emit(T.CallOp, list(residuals) + list(ct_diff), callee=Symbol(info.bwd))
        return _vjp_result(traced, outs, run_bwd, in_tree, in_avals, diff_args,
                           diff_results, has_aux)
    return _vjp_eager(fun, primals, leaves, in_tree, in_avals, diff_args, has_aux)


def _diff_results(traced, has_aux):
    n_main = traced.out_tree.children()[0].num_leaves if has_aux else len(traced.out_avals)
    return tuple(j for j, a in enumerate(traced.out_avals[:n_main]) if _is_inexact(a))


def _vjp_result(traced, outs, run_bwd, in_tree, in_avals, diff_args, diff_results, has_aux):
    out = tree_util.tree_unflatten(traced.out_tree, outs)
    if has_aux:
        main_tree = traced.out_tree.children()[0]
        n = main_tree.num_leaves
        f = _VjpFun(run_bwd, main_tree, traced.out_avals[:n], in_tree, in_avals, diff_args,
                    diff_results)
        return out[0], f, out[1]
    f = _VjpFun(run_bwd, traced.out_tree, traced.out_avals, in_tree, in_avals, diff_args,
                diff_results)
    return out, f


def _vjp_eager(fun, primals, leaves, in_tree, in_avals, diff_args, has_aux):
    """Compiles the forward (outs + residuals) and backward functions separately; the
    returned vjp_fun runs only the backward, on the saved residual buffers."""
    from mjax.array import Array
    from mjax.lowering import lower_to_stablehlo
    from mjax.passes.autodiff import vjp_functions
    from mjax.runtime import get_backend
    from mjax.core import to_numpy
    traced = trace_function(fun, tuple(primals), {}, name="f", visibility="private")
    diff_results = _diff_results(traced, has_aux)
    with context(), ir.Location.unknown(context()):
        info = vjp_functions(traced.module, traced.name, diff_args, diff_results)
    text = str(traced.module)

    def compile_entry(callee):
        with context(), ir.Location.unknown(context()):
            module = ir.Module.parse(text)
            _add_main(module, callee)
        return get_backend().compile(lower_to_stablehlo(module))

    fwd_exe, bwd_exe = compile_entry(info.fwd), compile_entry(info.bwd)
    captured = [c._buf if isinstance(c, Array) else get_backend().put(to_numpy(c))
                for c in traced.captured]
    bufs = [x._buf if isinstance(x, Array) else get_backend().put(to_numpy(x))
            for x in leaves]
    res = fwd_exe.execute(bufs + captured)
    outs = [Array(b, a) for b, a in zip(res[:info.num_outputs], traced.out_avals)]
    residuals = res[info.num_outputs:]

    def run_bwd(ct_diff):
        ct_bufs = []
        for c, j in zip(ct_diff, diff_results):
            a = traced.out_avals[j]
            ct_bufs.append(c._buf if isinstance(c, Array) and c.dtype == a.dtype else
                           get_backend().put(np.asarray(c, dtype=a.dtype)))
        outs_b = bwd_exe.execute(list(residuals) + ct_bufs)
        return [Array(b, in_avals_i.strip_weak_type()) for b, in_avals_i in
                zip(outs_b, [in_avals[i] for i in diff_args])]
    return _vjp_result(traced, outs, run_bwd, in_tree, in_avals, diff_args, diff_results,
                       has_aux)


def _add_main(module, callee):
    """A public @main that calls @callee (so XLA has an entry point)."""
    from jaxlib.mlir.dialects import func
    from mjax.dialect.ops.transforms import function_signature
    table = ir.SymbolTable(module.operation)
    ins, outs = function_signature(table[callee].operation)
    from mjax.dialect import tensor_type
    with ir.InsertionPoint(module.body):
        f = func.FuncOp("main", ([tensor_type(a) for a in ins], [tensor_type(a) for a in outs]))
        block = f.add_entry_block()
    b = Builder(ir.InsertionPoint(block), ir.Location.unknown(context()))
    res = T.emit_transform(b, T.CallOp, *block.arguments, callee=Symbol(callee))
    func.ReturnOp(res, ip=ir.InsertionPoint(block))


# ---- jacobians ----------------------------------------------------------------------------
def _std_basis(aval):
    import mjax.numpy as jnp
    n = aval.size
    return jnp.reshape(jnp.eye(n, dtype=aval.dtype), (n,) + aval.shape)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """Jacobian by forward mode: one JVP per input element (output dims first)."""
    import mjax.numpy as jnp

    def jac(*args):
        single, nums = _argnums_tuple(argnums, len(args))
        results = []
        aux = None
        for i in nums:
            x = args[i]
            xa = aval_of_value(x)
            _check_input_dtype(xa, False, holomorphic, "jacfwd")

            def f_i(xi, i=i):
                a = list(args)
                a[i] = xi
                return fun(*a)
            basis = _std_basis(xa)
            cols = []
            for k in range(xa.size):
                r = jvp(f_i, (x,), (basis[k],), has_aux=has_aux)
                cols.append(r[1])
                if has_aux:
                    aux = r[2]
            results.append(tree_util.tree_map(
                lambda *c: jnp.moveaxis(jnp.reshape(jnp.stack(c), xa.shape + c[0].shape),
                                        tuple(range(xa.ndim)),
                                        tuple(range(c[0].ndim, c[0].ndim + xa.ndim)))
                if xa.ndim else c[0], *cols))
        out = results[0] if single else tuple(results)
        return (out, aux) if has_aux else out
    return jac


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """Jacobian by reverse mode: one VJP per output element (output dims first)."""
    import mjax.numpy as jnp

    def jac(*args):
        single, nums = _argnums_tuple(argnums, len(args))

        def f_sel(*xs):
            a = list(args)
            for i, x in zip(nums, xs):
                a[i] = x
            return fun(*a)
        res = vjp(f_sel, *[args[i] for i in nums], has_aux=has_aux)
        y, pullback = res[0], res[1]
        ya = aval_of_value(y)
        basis = _std_basis(ya)
        rows = [pullback(basis[k]) for k in range(ya.size)]
        out = []
        for j, i in enumerate(nums):
            xa = aval_of_value(args[i])
            stacked = jnp.stack([r[j] for r in rows]) if rows else jnp.zeros((0,) + xa.shape)
            out.append(jnp.reshape(stacked, ya.shape + xa.shape))
        out = out[0] if single else tuple(out)
        return (out, res[2]) if has_aux else out
    return jac


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """jacfwd(jacrev(fun))."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


# ---- custom rules ---------------------------------------------------------------------------
class custom_jvp:
    """A function with a user-defined JVP. JAX: jax.custom_jvp (defjvp, defjvps)."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None
        self._tracing_rule = 0

    def defjvp(self, jvp, symbolic_zeros=False):
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        def jvp_(primals, tangents):
            out = self(*primals)
            tans = [j(t, out, *primals) for j, t in zip(jvps, tangents)
                    if j is not None]
            total = functools.reduce(lambda a, b: a + b, tans) if tans else _zeros(
                aval_of_value(out), False)
            return out, total
        self.jvp = jvp_

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError("custom_jvp functions do not accept keyword arguments")
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function "
                                 f"{getattr(self.fun, '__name__', self.fun)} using defjvp.")
        if self._tracing_rule:
            # Called from inside its own rule (as in `return f(x), t`): a plain call.
            return self.fun(*args)
        static = {i: args[i] for i in self.nondiff_argnums}
        dyn = [a for i, a in enumerate(args) if i not in static]

        def full(dyn_args):
            it = iter(dyn_args)
            return [static[i] if i in static else next(it) for i in range(len(args))]

        def impl(*dyn_args):
            f_tr = stage_function(lambda *d: self.fun(*full(d)), dyn_args, {},
                                  name=getattr(self.fun, "__name__", "custom_jvp"))
            leaves, _ = tree_util.tree_flatten((dyn_args, {}))
            in_avals = [aval_of_value(x) for x in leaves]
            p_tree = tree_util.tree_structure(tuple(dyn_args))

            def rule(*flat):
                n = len(in_avals)
                p_leaves = flat[:n]
                t_iter = iter(flat[n:])
                t_leaves = [next(t_iter) if _is_inexact(a) else _zeros(a)
                            for a in in_avals]
                primals = tree_util.tree_unflatten(p_tree, p_leaves)
                tangents = tree_util.tree_unflatten(p_tree, t_leaves)
                nd = [static[i] for i in self.nondiff_argnums]
                out, tout = self.jvp(*nd, tuple(primals), tuple(tangents))
                o_leaves = tree_util.tree_leaves(out)
                t_out = tree_util.tree_leaves(tout)
                t_out = [t for o, t in zip(o_leaves, t_out) if _is_inexact(aval_of_value(o))]
                return list(o_leaves) + [
                    lax_convert(t, aval_of_value(o).dtype) for o, t in zip(
                        [o for o in o_leaves if _is_inexact(aval_of_value(o))], t_out)]
            jvp_avals = in_avals + [a for a in in_avals if _is_inexact(a)]
            if f_tr.captured:
                raise NotImplementedError("custom_jvp functions that close over traced "
                                          "values are not supported yet; pass them as "
                                          "arguments")
            self._tracing_rule += 1
            try:
                g_tr = stage_function(rule, tuple(ShapedArrayArg(a) for a in jvp_avals), {},
                                      name="custom_jvp_rule")
            finally:
                self._tracing_rule -= 1
            if g_tr.captured:
                raise NotImplementedError("custom_jvp rules that close over traced values "
                                          "are not supported yet")
            outs = emit(T.CustomJvpCallOp, leaves, callee=Symbol(f_tr.name),
                        jvp=Symbol(g_tr.name))
            for t, a in zip(outs, f_tr.out_avals):
                t.aval = a
            return tree_util.tree_unflatten(f_tr.out_tree, outs)
        if current_trace() is not None:
            return impl(*dyn)
        return Jitted(impl)(*dyn)


def lax_convert(x, dtype):
    from mjax import lax
    return lax.convert_element_type(x, dtype)


class ShapedArrayArg:
    """An abstract argument for tracing: only its aval is known."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval


class custom_vjp:
    """A function with a user-defined VJP. JAX: jax.custom_vjp (defvjp)."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise TypeError("custom_vjp functions do not accept keyword arguments")
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function "
                                 f"{getattr(self.fun, '__name__', self.fun)} using defvjp.")
        static = {i: args[i] for i in self.nondiff_argnums}
        dyn = [a for i, a in enumerate(args) if i not in static]
        nd = [static[i] for i in self.nondiff_argnums]

        def full(dyn_args):
            it = iter(dyn_args)
            return [static[i] if i in static else next(it) for i in range(len(args))]

        def impl(*dyn_args):
            leaves, _ = tree_util.tree_flatten((dyn_args, {}))
            in_avals = [aval_of_value(x) for x in leaves]
            f_tr = stage_function(lambda *d: self.fun(*full(d)), dyn_args, {},
                                  name=getattr(self.fun, "__name__", "custom_vjp"))
            res_tree = {}

            def fwd_flat(*p):
                out, res = self.fwd(*full(p))
                r_leaves, res_tree["tree"] = tree_util.tree_flatten(res)
                res_tree["avals"] = [aval_of_value(r) for r in r_leaves]
                return list(tree_util.tree_leaves(out)) + list(r_leaves)
            a_tr = stage_function(fwd_flat, dyn_args, {}, name="custom_vjp_fwd")
            n_out = len(f_tr.out_avals)
            out_inexact = [a for a in f_tr.out_avals if _is_inexact(a)]

            def bwd_flat(*flat):
                nres = len(res_tree["avals"])
                res = tree_util.tree_unflatten(res_tree["tree"], flat[:nres])
                ct_iter = iter(flat[nres:])
                cts = [next(ct_iter) if _is_inexact(a) else _zeros(a) for a in f_tr.out_avals]
                ct = tree_util.tree_unflatten(f_tr.out_tree, cts)
                got = self.bwd(*nd, res, ct)
                if not isinstance(got, (tuple, list)) or len(got) != len(dyn_args):
                    raise TypeError(f"Custom VJP bwd rule must produce a tuple of length "
                                    f"equal to the number of differentiable primal args "
                                    f"({len(dyn_args)}), got {got}")
                g_leaves = []
                for g, a in zip(got, dyn_args):
                    sub = tree_util.tree_leaves(a)
                    gl = [None] * len(sub) if g is None else tree_util.tree_leaves(g)
                    g_leaves.extend(gl)
                return [lax_convert(g, a.dtype) if g is not None else _zeros(a, False)
                        for g, a in zip(g_leaves, in_avals) if _is_inexact(a)]
            b_avals = list(a_tr.out_avals[n_out:]) + out_inexact
            b_tr = stage_function(bwd_flat, tuple(ShapedArrayArg(a) for a in b_avals), {},
                                  name="custom_vjp_bwd")
            if f_tr.captured or a_tr.captured or b_tr.captured:
                raise NotImplementedError("custom_vjp functions whose fun/fwd/bwd close over "
                                          "traced values are not supported yet; pass them "
                                          "as arguments")
            outs = emit(T.CustomVjpCallOp, leaves, callee=Symbol(f_tr.name),
                        fwd=Symbol(a_tr.name), bwd=Symbol(b_tr.name))
            for t, a in zip(outs, f_tr.out_avals):
                t.aval = a
            return tree_util.tree_unflatten(f_tr.out_tree, outs)
        if current_trace() is not None:
            return impl(*dyn)
        return Jitted(impl)(*dyn)


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    """Marks fun for rematerialization: reverse mode recomputes its forward pass in the
    backward pass instead of saving residuals (visible as `jaxpr.checkpoint` in the IR)."""
    @functools.wraps(fun)
    def remat_f(*args, **kwargs):
        def impl(*a, **kw):
            traced = stage_function(fun, a, kw)
            leaves = tree_util.tree_leaves((a, kw))
            outs = emit(T.CheckpointOp, call_args(traced, leaves), callee=Symbol(traced.name),
                        prevent_cse=bool(prevent_cse))
            for t, av in zip(outs, traced.out_avals):
                t.aval = av
            return tree_util.tree_unflatten(traced.out_tree, outs)
        if current_trace() is not None:
            return impl(*args, **kwargs)
        return Jitted(impl)(*args, **kwargs)
    return remat_f


remat = checkpoint
