"""Structured control flow, as in `jax.lax`: cond, switch, while_loop, fori_loop, scan,
map and associative_scan.

Bodies are traced into regions of `jaxpr.cond` / `jaxpr.while` / `jaxpr.scan`
(dialect/ops/control_flow.py documents the operand and region layouts). Values a body
closes over become explicit operands. Outside any trace the construct runs as a jit of
itself; under `jax_disable_jit` it runs as plain Python, as JAX does.
"""
from __future__ import annotations

import builtins
import collections
import inspect

import numpy as np

from mjax.specs import dtypes
from mjax.tracing import registration
from mjax.base import trace_trees, tree_util
from mjax.config import config
from mjax.tracing.core import (Carry, Tracer, aval_of_value, current_trace,
                               describe_location, discarding_on_error, emit_region_op,
                               user_location, user_staged)
from mjax.dialect.core import InferError
from mjax.dialect.ops import control_flow as C
from mjax.dialect.types import ShapedArray
from mjax.specs.dtypes import hitype_rules
from mjax.tracing.hijax_lowering import (CapturedHiError, HiResultError, has_hi, scan_hi,
                                         scan_values_hi)
from mjax.lax.elementwise import as_array, clamp, convert_element_type, lt, ne
from mjax.lax.shapes import concatenate, reshape, rev, slice_in_dim, stack
from mjax.tracing.region_cache import trace_region_kept
from mjax.arrays.sharding_types import carry_types


# ---- shared helpers -------------------------------------------------------------------
def _fun_desc(f) -> str:
    code = getattr(f, "__code__", None)
    name = getattr(f, "__name__", repr(f))
    return f"{name} at {code.co_filename}:{code.co_firstlineno}" if code else name


def _long(a: ShapedArray) -> str:
    """JAX's long type spelling: float32[3,4]."""
    return f"{a.dtype.name}[{','.join(str(d) for d in a.shape)}]"


def _aval_repr(a: ShapedArray) -> str:
    weak = ", weak_type=True" if a.weak_type else ""
    return f"ShapedArray({_long(a)}{weak})"


def _differ(a: ShapedArray, b: ShapedArray) -> str:
    parts = [w for w, bad in (("shapes", a.shape != b.shape), ("dtypes", a.dtype != b.dtype))
             if bad]
    return " and ".join(parts)


def _paths(tree) -> list[str]:
    """keystr-like paths of a treedef's leaves ('' for a single leaf)."""
    return [tree_util.keystr(p) for p in tree_util.treedef_key_paths(tree)]


def _where() -> str:
    """The user's line, appended to JAX's wording of a type mismatch."""
    return f"\n\n(at {describe_location(user_location())})"


def _is_concrete(x) -> bool:
    return not isinstance(x, Tracer)


# (user functions, static arguments) -> the jit of an eager loop or cond over them: called
# again with the same body, it neither traces nor compiles again (JAX caches the traced
# body the same way). Bounded, since the keys hold the user's functions.
_EAGER_JITS: collections.OrderedDict = collections.OrderedDict()
_EAGER_JITS_MAX = 128


def clear_cache() -> None:
    """Drops the jits of eager loops and conds (jax.clear_caches)."""
    _EAGER_JITS.clear()


def _run_as_jit(key, construct, *args):
    """Runs `construct(*args)` (array pytrees) as a jit of itself: region ops exist only
    inside traces (registration.JIT: jit is floors above). `key` names everything
    `construct` closes over (the user's functions, static arguments)."""
    try:
        jitted = _EAGER_JITS.get(key)
    except TypeError:      # (an unhashable static argument: not cached)
        jitted = registration.JIT(construct)
    else:
        if jitted is None:
            jitted = _EAGER_JITS[key] = registration.JIT(construct)
            if len(_EAGER_JITS) > _EAGER_JITS_MAX:
                _EAGER_JITS.popitem(last=False)
        else:
            _EAGER_JITS.move_to_end(key)
    # (the Arrays the bodies close over are the program's arguments, as JAX's eager
    # cond/while/scan take them as operands: XLA folds no constant of them; Trace.to_tracer)
    return jitted(*args)


def _infer(opcls, operands, params, sigs):
    try:
        return list(opcls.infer_regions([aval_of_value(v).strip_weak_type() for v in operands],
                                        params, sigs))
    except (InferError, TypeError, ValueError) as e:
        raise TypeError(f"{e} (in {opcls.OPERATION_NAME} at "
                        f"{describe_location(user_location())})") from None


def _region_sig(body, outer, out_avals):
    return ([aval_of_value(v).strip_weak_type() for v in outer] + body.in_avals,
            [a.strip_weak_type() for a in out_avals])


def _carry_mismatch(kind, name, in_tree, out_tree, in_avals, out_avals):
    """JAX's TypeError for a loop body whose carry output differs from its input; None
    when they agree (ignoring weak types)."""
    if in_tree != out_tree:
        return TypeError(
            f"{kind} body function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\nThe input carry {name} has pytree structure "
            f"{in_tree} but the corresponding carry output has pytree structure "
            f"{out_tree}.\n\nRevise the function so that the carry output has the same "
            f"pytree structure as the carry input.{_where()}")
    for path, a, b in zip(_paths(in_tree), in_avals, out_avals):
        if a.shape != b.shape or a.dtype != b.dtype:
            what = f"{name}{path}" if path else name
            return TypeError(
                f"{kind} body function carry input and carry output must have equal types, "
                f"but they differ:\n\nThe input carry {'component ' if path else ''}{what} "
                f"has type {_long(a)} but the corresponding output carry component has "
                f"type {_long(b)}, so the {_differ(a, b)} do not match.\n\nRevise the "
                f"function so that all output types match the corresponding input types."
                f"{_where()}")
    return None


def _promote_weak(init_avals, out_avals, strength=True):
    """JAX: a weakly typed initial carry takes the dtype its body produces (and, with
    `strength`, as while_loop does, its strong type). Returns the new init avals, or None
    when nothing changes."""
    new, changed = [], False
    for a, b in zip(init_avals, out_avals):
        if a.weak_type and a.shape == b.shape and a.dtype != b.dtype:
            # JAX converts the carry to the join of both (weak types taking part) and
            # makes it strong: lax.convert_element_type.
            new.append(ShapedArray(a.shape, dtypes.result_type(_typed(a), _typed(b)), False))
            changed = True
        elif a.weak_type and a.shape == b.shape and strength and not b.weak_type:
            new.append(ShapedArray(a.shape, a.dtype, False))
            changed = True
        else:
            new.append(a)
    return new if changed else None


def _typed(aval):
    """A scalar standing for `aval`'s dtype and weak type in dtypes.result_type."""
    if aval.weak_type:
        return {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}.get(aval.dtype.kind, 0.0)
    return np.zeros((), aval.dtype)


def _convert_leaves(leaves, avals):
    return [v if aval_of_value(v) == a else
            convert_element_type(v, a.dtype, weak_type=a.weak_type)
            for v, a in zip(leaves, avals)]


def _first_arg_name(f, default: str) -> str:
    try:
        params = list(inspect.signature(f).parameters)
        return params[0] if params else default
    except (TypeError, ValueError):
        return default


def _union(lists) -> list:
    seen, out = set(), []
    for values in lists:
        for v in values:
            if id(v) not in seen:
                seen.add(id(v))
                out.append(v)
    return out


# ---- cond / switch ---------------------------------------------------------------------
def _check_branch_outputs(kind, names, funs, trees, avals):
    t0, n0, f0 = trees[0], names[0], funs[0]
    for i in range(1, len(trees)):
        ti, ni = trees[i], names[i]
        both = f"{n0} is {_fun_desc(f0)}\n{ni} is {_fun_desc(funs[i])}"
        if ti != t0:
            raise TypeError(
                f"{kind} branch outputs must have the same pytree structure, but they "
                f"differ:\n\n{both}\n\n{n0} output has pytree structure {t0} but {ni} "
                f"output has pytree structure {ti}.\n\nRevise {n0} and/or {ni} so that "
                f"they have the same pytree structure.{_where()}")
        for path, a, b in zip(_paths(t0), avals[0], avals[i]):
            if a.shape != b.shape or a.dtype != b.dtype:
                where = f" at path {path}" if path else ""
                raise TypeError(
                    f"{kind} branches must have equal output types but they differ.\n\n"
                    f"{both}\n\nThe output of {n0}{where} has type {_long(a)} but the "
                    f"corresponding output of {ni} has type {_long(b)}, so the "
                    f"{_differ(a, b)} do not match.\n\nRevise {n0} and/or {ni} so that all "
                    f"output types match.{_where()}")


def _cond_core(kind, index, branches, names, operands, params=None):
    """Stages jaxpr.cond: `index` is an int32 scalar already in range (`params`: the op's
    attributes, e.g. select_ref)."""
    ops_flat, ops_tree = trace_trees.tree_flatten(operands)
    in_avals = [aval_of_value(v) for v in ops_flat]
    bodies, trees, out_avals = [], [], []
    with discarding_on_error(bodies):
        for fun in branches:
            body, avals, tree = trace_region_kept(fun, "branch", fun, in_avals, ops_tree,
                                                  ops_flat)
            bodies.append(body)
            trees.append(tree)
            out_avals.append(avals)
        # JAX compares true_fun against false_fun: the branch order reversed.
        order = slice(None, None, -1) if kind == "cond" else slice(None)
        _check_branch_outputs(kind, names[order], tuple(branches)[order], trees[order],
                              out_avals[order])
        consts = _union(b.captured for b in bodies)
        operands_flat = [index] + consts + ops_flat
        sigs = [_region_sig(b, consts, a) for b, a in zip(bodies, out_avals)]
        result = _infer(C.CondOp, operands_flat, params or {}, sigs)
        # JAX: the outputs' weak types are branch 0's (cond's false_fun), whatever the
        # others' (their types agree up to weak types).
        result = [a.update(weak_type=w.weak_type) for a, w in zip(result, out_avals[0])]
        outs = emit_region_op(C.CondOp, operands_flat, params or {}, bodies,
                              [consts] * len(bodies),
                              result)
    # An output every branch returns as the same operand is that operand, as in JAX (so an
    # unbatched value passed through a cond with a batched predicate stays unbatched).
    for j, fwd in enumerate(zip(*(b.forwarded for b in bodies))):
        i = fwd[0]
        if i is not None and all(f == i for f in fwd) and hasattr(ops_flat[i], "aval"):
            outs[j] = ops_flat[i]
    return tree_util.tree_unflatten(trees[0], outs)


_NO_OPERAND = object()


def _one_operand(operand, operands):
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError(f"if 'operand' keyword is passed then no positional operands can "
                            f"be passed, got operand={operand} and positional operands "
                            f"{operands}")
        return (operand,)
    return operands


@user_staged
def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """true_fun(*operands) if pred else false_fun(*operands), staged as jaxpr.cond.
    JAX: lax.cond."""
    if not callable(true_fun) and callable(false_fun) and len(operands) == 2 and \
            callable(operands[1]) and operand is _NO_OPERAND:
        # JAX's older form, still accepted: cond(pred, true_operand, true_fun,
        # false_operand, false_fun)
        (t_op, t_fun), (f_op, f_fun) = (true_fun, false_fun), operands
        return cond(pred, lambda ops: t_fun(ops[0]), lambda ops: f_fun(ops[1]), (t_op, f_op))
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    operands = _one_operand(operand, operands)
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, (list, tuple, str)) or np.ndim(pred) != 0:
        raise TypeError(f"Pred must be a scalar, got {pred} of "
                        + (f"type {type(pred)}" if isinstance(pred, (list, tuple, str))
                           else f"shape {np.shape(pred)}."))
    try:
        pred_dtype = aval_of_value(pred).dtype
    except TypeError:
        raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from None
    if np.dtype(pred_dtype).kind not in "biuf":
        raise TypeError(f"Pred type must be either boolean or number, got {pred_dtype}.")
    if config.read("jax_disable_jit") and _is_concrete(pred):
        return true_fun(*operands) if bool(pred) else false_fun(*operands)
    if current_trace() is None:
        return _run_as_jit(("cond", true_fun, false_fun),
                           lambda p, ops: cond(p, true_fun, false_fun, *ops), pred, operands)
    if np.dtype(pred_dtype).kind != "b":
        pred = ne(pred, np.zeros((), pred_dtype))
    index = convert_element_type(pred, np.int32)
    return _cond_core("cond", index, (false_fun, true_fun), ("false_fun", "true_fun"),
                      operands)


@user_staged
def switch(index, branches, *operands, operand=_NO_OPERAND):
    """branches[clamp(0, index, len(branches) - 1)](*operands), staged as jaxpr.cond.
    JAX: lax.switch."""
    operands = _one_operand(operand, operands)
    if np.ndim(index) != 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape "
                        f"{np.shape(index)}.")
    try:
        index_dtype = aval_of_value(index).dtype
    except TypeError:
        raise TypeError(f"Index type must be an integer, got {index}.") from None
    if np.dtype(index_dtype).kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {index_dtype}")
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    for b in branches:
        if not callable(b):
            raise TypeError(f"lax.switch: branches must be callable, got {b!r}.")
    if len(branches) == 1:
        return branches[0](*operands)
    if config.read("jax_disable_jit") and _is_concrete(index):
        return branches[builtins.min(builtins.max(int(index), 0), len(branches) - 1)](
            *operands)
    if current_trace() is None:
        return _run_as_jit(("switch", tuple(branches)),
                           lambda i, ops: switch(i, branches, *ops), index, operands)
    index = convert_element_type(index, np.int32)
    index = clamp(np.int32(0), index, np.int32(len(branches) - 1))
    names = [f"branch {i}" for i in range(len(branches))]
    return _cond_core("switch", index, branches, names, operands)


# ---- while_loop / fori_loop --------------------------------------------------------------
@user_staged
def while_loop(cond_fun, body_fun, init_val):
    """Repeats body_fun while cond_fun holds, staged as jaxpr.while. JAX: lax.while_loop."""
    if not (callable(cond_fun) and callable(body_fun)):
        raise TypeError("lax.while_loop: cond_fun and body_fun arguments should be callable.")
    if config.read("jax_disable_jit"):
        val = init_val
        while cond_fun(val):
            val = body_fun(val)
        return val
    if current_trace() is None:
        return _run_as_jit(("while", cond_fun, body_fun),
                           lambda v: while_loop(cond_fun, body_fun, v), init_val)
    return _while(cond_fun, body_fun, init_val, _first_arg_name(body_fun, "init_val"))


def _while(cond_fun, body_fun, init_val, carry_name, owners=None):
    """while_loop's staging; `owners`: the user's functions the bodies are kept for
    (default: cond_fun and body_fun; mjax.tracing.region_cache)."""
    (cond_owner, cond_kind), (body_owner, body_kind) = owners or (
        (cond_fun, "while_cond"), (body_fun, "while_body"))
    init_flat, tree = trace_trees.tree_flatten(init_val)
    avals = [aval_of_value(v) for v in init_flat]
    args_tree = trace_trees.tree_structure((init_val,))
    # Another pass each time weak carries get promoted (each at most int -> float ->
    # complex, so the count is bounded).
    for _ in range(3 * len(avals) + 1):
        bodies = []
        with discarding_on_error(bodies):
            cbody, cond_out, cond_tree = trace_region_kept(
                cond_owner, cond_kind, cond_fun, avals, args_tree,
                [Carry(v) for v in init_flat])
            bodies.append(cbody)
            if (len(cond_out) != 1 or not tree_util.treedef_is_leaf(cond_tree)
                    or cond_out[0].shape != () or str(cond_out[0].dtype) != "bool"):
                raise TypeError(f"cond_fun must return a boolean scalar, but got output "
                                f"type(s) [{', '.join(_aval_repr(a) for a in cond_out)}]."
                                f"{_where()}")
            bbody, body_out, body_tree = trace_region_kept(
                body_owner, body_kind, body_fun, avals, args_tree,
                [Carry(v) for v in init_flat])
            bodies.append(bbody)
            err = _carry_mismatch("while_loop", carry_name, tree, body_tree, avals, body_out)
            promoted = _promote_weak(avals, body_out) if body_tree == tree else None
            if promoted is None and err is not None:
                raise err
        if promoted is None:
            break
        for body in bodies:
            body.discard()
        avals, init_flat = promoted, _convert_leaves(init_flat, promoted)
    else:
        raise TypeError(f"while_loop: the types of the weakly typed loop carries did not "
                        f"settle after {3 * len(avals) + 1} passes")
    with discarding_on_error(bodies):
        cconsts, bconsts = list(cbody.captured), list(bbody.captured)
        params = {"cond_nconsts": len(cconsts), "body_nconsts": len(bconsts)}
        operands = cconsts + bconsts + init_flat
        sigs = [_region_sig(cbody, cconsts, cond_out), _region_sig(bbody, bconsts, body_out)]
        result = _infer(C.WhileOp, operands, params, sigs)
        # JAX: the results keep the initial carry's weak types.
        result = [r.update(weak_type=a.weak_type) for r, a in zip(result, avals)]
        outs = emit_region_op(C.WhileOp, operands, params, bodies, [cconsts, bconsts],
                              result)
    carry_types(init_flat, outs)
    return tree_util.tree_unflatten(tree, outs)


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """Loops body_fun(i, val) for i in [lower, upper). With concrete bounds it is a scan
    (reverse-differentiable, as in JAX); otherwise a while loop. JAX: lax.fori_loop."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    lo_aval, hi_aval = aval_of_value(lower), aval_of_value(upper)
    dtype = lo_aval.dtype
    if lo_aval.dtype != hi_aval.dtype:
        # JAX: a weakly typed signed integer bound takes the other bound's dtype.
        signed = all(np.issubdtype(a.dtype, np.signedinteger) for a in (lo_aval, hi_aval))
        if signed and lo_aval.weak_type != hi_aval.weak_type:
            dtype = hi_aval.dtype if lo_aval.weak_type else lo_aval.dtype
        else:
            raise TypeError(f"lower and upper arguments to fori_loop must have equal types, "
                            f"got {np.dtype(lo_aval.dtype).name} and "
                            f"{np.dtype(hi_aval.dtype).name}")
    try:
        lo, hi = int(lower), int(upper)
        static = True
    except TypeError:
        static = False
    if static and current_trace() is None and not config.read("jax_disable_jit"):
        return _run_as_jit(("fori", body_fun, lo, hi, unroll),
                           lambda v: fori_loop(lo, hi, body_fun, v, unroll=unroll), init_val)
    if static:
        # As JAX: the index is a Python int carry (weakly typed), the loop a scan.
        def step(carry, _):
            i, x = carry
            return (i + 1, body_fun(i, x)), None
        length = builtins.max(hi - lo, 0)
        if config.read("jax_disable_jit") and length == 0:
            return init_val
        (_, result), _ = _scan(step, (lo, init_val), None, length, False,
                               False if unroll is None else unroll, "loop_carry",
                               kept_as=(body_fun, "fori"))
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         "statically known.")
    if current_trace() is None:
        return _run_as_jit(("fori", body_fun),
                           lambda lo_, hi_, v: fori_loop(lo_, hi_, body_fun, v),
                           lower, upper, init_val)

    def wcond(carry):
        return lt(carry[0], carry[1])

    def wbody(carry):
        i, n, x = carry
        return i + 1, n, body_fun(i, x)
    lower, upper = (b if aval_of_value(b).dtype == dtype else
                    convert_element_type(b, dtype) for b in (lower, upper))
    return _while(wcond, wbody, (lower, upper, init_val), "loop_carry",
                  owners=((body_fun, "fori_cond"), (body_fun, "fori_body")))[2]


# ---- scan ------------------------------------------------------------------------------
@user_staged
def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """Loops f(carry, x) -> (carry, y) over the leading axis of xs, stacking the ys;
    staged as jaxpr.scan. JAX: lax.scan."""
    if not callable(f):
        raise TypeError("scan: f argument should be a callable.")
    name = _first_arg_name(f, "init")
    if not hitype_rules:
        return _scan(f, init, xs, length, reverse, unroll, name)
    def lo_scan(g, c, x):
        return _scan(g, c, x, length, reverse, unroll, name)
    if has_hi((init, xs)):     # (hijax values: mjax/hijax_lowering)
        return scan_values_hi(lo_scan, f, init, xs)
    try:
        return _scan(f, init, xs, length, reverse, unroll, name)
    except CapturedHiError:    # (closed-over hijax values mutated)
        return scan_hi(lo_scan, f, init, xs)
    except HiResultError:      # (hijax results)
        return scan_values_hi(lo_scan, f, init, xs)


def _scan_length(xs_flat, length):
    bad = [x for x in xs_flat if np.ndim(x) == 0]
    if bad:
        raise ValueError(f"scan got value with no leading axis to scan over: "
                         f"{', '.join(str(x) for x in bad)}.")
    lengths = [np.shape(x)[0] for x in xs_flat]
    if length is not None:
        try:
            length = int(length)
        except TypeError:
            raise TypeError(f"scan got an invalid length: {length!r} (it must be a "
                            f"concrete integer)") from None
        if not all(n == length for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {lengths}.")
        return builtins.max(length, 0)  # JAX: a negative length runs no iteration
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    if len(set(lengths)) > 1:
        raise ValueError(f"scan got values with different leading axis sizes: "
                         f"{', '.join(str(n) for n in lengths)}.")
    return lengths[0]


def _scan_python(f, init, xs, length, reverse):
    """scan under jax_disable_jit: a Python loop."""
    carry, ys = init, []
    order = range(length - 1, -1, -1) if reverse else range(length)
    for i in order:
        carry, y = f(carry, trace_trees.tree_map(lambda x: x[i], xs))
        ys.append(y)
    if reverse:
        ys.reverse()
    if not ys:
        raise NotImplementedError("scan of length 0 under jax_disable_jit")
    return carry, trace_trees.tree_map(lambda *y: stack([as_array(v) for v in y]), *ys)


def _scan(f, init, xs, length, reverse, unroll, carry_name, kept_as=None):
    """scan's staging; `kept_as`: (the user's function, role) its body is kept for and
    reused as (mjax.tracing.region_cache; default (f, "scan"), False: not kept)."""
    owner, kind = (f, "scan") if kept_as is None else kept_as or (None, None)
    xs_flat, xs_tree = trace_trees.tree_flatten(xs)
    length = _scan_length(xs_flat, length)
    if isinstance(unroll, bool):
        unroll = builtins.max(length, 1) if unroll else 1
    if not isinstance(unroll, (int, np.integer)) or unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    if unroll == 0:  # JAX: 0 unrolls the whole loop
        unroll = builtins.max(length, 1)
    if config.read("jax_disable_jit") and length > 0:
        return _scan_python(f, init, xs, length, reverse)
    if current_trace() is None:
        return _run_as_jit(("scan", f, length, reverse, unroll, carry_name),
                           lambda i, x: _scan(f, i, x, length, reverse, unroll, carry_name),
                           init, xs)
    init_flat, init_tree = trace_trees.tree_flatten(init)
    init_avals = [aval_of_value(v) for v in init_flat]
    x_avals = [ShapedArray(a.shape[1:], a.dtype, a.weak_type)
               for a in (aval_of_value(x) for x in xs_flat)]
    args_tree = trace_trees.tree_structure((init, xs))
    trees = {}

    def body_fun(carry, x):
        out = f(carry, x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(f"scan body output must be a pair, got {out}.")
        c_flat, trees["carry"] = trace_trees.tree_flatten(out[0])
        y_flat, trees["y"] = trace_trees.tree_flatten(out[1])
        return c_flat + y_flat

    n = len(init_flat)
    for _ in range(3 * n + 1):  # another pass each time weak carries get promoted
        body, out_avals, _ = trace_region_kept(
            owner, kind, body_fun, init_avals + x_avals, args_tree,
            [Carry(v) for v in init_flat] + xs_flat, side=trees)
        with discarding_on_error([body]):
            carry_out = out_avals[:n] if trees["carry"] == init_tree else out_avals
            err = _carry_mismatch("scan", carry_name, init_tree, trees["carry"], init_avals,
                                  carry_out)
            promoted = (_promote_weak(init_avals, carry_out, strength=False)
                        if trees["carry"] == init_tree else None)
            if promoted is None and err is not None:
                raise err
        if promoted is None:
            break
        body.discard()
        init_avals, init_flat = promoted, _convert_leaves(init_flat, promoted)
    else:
        raise TypeError(f"scan: the types of the weakly typed carries did not settle after "
                        f"{3 * n + 1} passes")
    with discarding_on_error([body]):
        consts = list(body.captured)
        params = {"length": length, "reverse": bool(reverse), "unroll": int(unroll),
                  "num_consts": len(consts), "num_carry": n}
        operands = consts + init_flat + xs_flat
        result = _infer(C.ScanOp, operands, params, [_region_sig(body, consts, out_avals)])
        weak = [a.weak_type and b.weak_type for a, b in zip(init_avals, out_avals)] + [
            b.weak_type for b in out_avals[n:]]
        result = [r.update(weak_type=w) for r, w in zip(result, weak)]
        outs = emit_region_op(C.ScanOp, operands, params, [body], [consts], result)
    carry_types(init_flat, outs[:n])
    return (tree_util.tree_unflatten(init_tree, outs[:n]),
            tree_util.tree_unflatten(trees["y"], outs[n:]))


# ---- map / associative_scan ---------------------------------------------------------------
def map(f, xs, *, batch_size=None):  # noqa: A001  (JAX's name)
    """[f(x) for x in xs] along the leading axis, stacked; a scan. With batch_size, the
    scan runs over batches (each batch is a vmap of f), then the remainder as one more
    vmap (registration.VMAP: vmap is floors above). JAX: lax.map."""
    if batch_size is None:
        return _scan(lambda _, x: ((), f(x)), (), xs, None, False, 1, "carry",
                     kept_as=False)[1]
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size}")
    xs_flat, _ = trace_trees.tree_flatten(xs)
    n = _scan_length(xs_flat, None)
    batch_size = builtins.min(int(batch_size), builtins.max(n, 1))
    full, rem = divmod(n, batch_size)

    per_batch = registration.VMAP(f)
    main = trace_trees.tree_map(
        lambda x: reshape(_leading(as_array(x), 0, full * batch_size, n),
                          (full, batch_size) + np.shape(x)[1:]), xs)
    ys = _scan(lambda _, xb: ((), per_batch(xb)), (), main, None, False, 1, "carry",
               kept_as=False)[1]
    ys = trace_trees.tree_map(lambda y: reshape(y, (full * batch_size,) + y.shape[2:]), ys)
    if rem:
        tail = per_batch(trace_trees.tree_map(
            lambda x: _leading(as_array(x), full * batch_size, n, n), xs))
        ys = trace_trees.tree_map(lambda a, b: concatenate([a, b], 0), ys, tail)
    return ys


def _leading(x, start, stop, n):
    """x[start:stop] along the leading axis (of length n); x itself when that is all."""
    return x if (start, stop) == (0, n) else slice_in_dim(x, start, stop)


def associative_scan(fn, elems, reverse=False, axis=0):
    """Inclusive prefix combination of elems along `axis` with the associative `fn`, in
    O(log n) depth (the odd/even recursion JAX uses), composed from slices and
    concatenations. JAX: lax.associative_scan."""
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    flat, tree = trace_trees.tree_flatten(elems)
    if not flat:
        return elems
    ndim = np.ndim(flat[0])
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    axis = axis % ndim
    n = np.shape(flat[0])[axis]
    if any(np.shape(x)[axis] != n for x in flat):
        raise ValueError(f"Array inputs to associative_scan must have the same first "
                         f"dimension. (saw: {[np.shape(x) for x in flat]})")
    flat = [as_array(x) for x in flat]
    if reverse:
        flat = [rev(x, (axis,)) for x in flat]

    def sl(x, start, stop, step=1):
        return slice_in_dim(x, start, stop, step, axis)

    def combine(a, b):
        out, out_tree = trace_trees.tree_flatten(fn(tree_util.tree_unflatten(tree, a),
                                                  tree_util.tree_unflatten(tree, b)))
        if out_tree != tree:
            raise ValueError(f"fn must return a pytree with the structure of elems "
                             f"({tree}), got {out_tree}")
        return out

    def interleave(even, odd):
        # even has ceil(k/2) entries along axis, odd floor(k/2): pair them up, then
        # append the last even one when k is odd.
        m = np.shape(odd)[axis]
        pairs = stack([sl(even, 0, m), odd], axis=axis + 1)
        shape = list(np.shape(odd))
        shape[axis] = 2 * m
        merged = reshape(pairs, shape)
        if np.shape(even)[axis] > m:
            merged = concatenate([merged, sl(even, m, m + 1)], axis)
        return merged

    def rec(xs):
        k = np.shape(xs[0])[axis]
        if k < 2:
            return xs
        pairs = combine([sl(x, 0, k - 1, 2) for x in xs], [sl(x, 1, k, 2) for x in xs])
        odd = rec(pairs)  # prefixes ending at positions 1, 3, 5, ...
        if k % 2 == 0:
            even = combine([sl(o, 0, np.shape(o)[axis] - 1) for o in odd],
                           [sl(x, 2, k, 2) for x in xs])
        else:
            even = combine(odd, [sl(x, 2, k, 2) for x in xs])
        even = [concatenate([sl(x, 0, 1), e], axis) for x, e in zip(xs, even)]
        return [interleave(e, o) for e, o in zip(even, odd)]

    out = rec(flat)
    if reverse:
        out = [rev(x, (axis,)) for x in out]
    return tree_util.tree_unflatten(tree, out)
