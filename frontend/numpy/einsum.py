"""`einsum`, as a sequence of pairwise `dot_general`s (JAX's steps), and `einsum_path`
(NumPy's contraction path search)."""
from __future__ import annotations

import operator

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.tracing.core import at_user_line, named_scope, Tracer
from mjax.lax.sharding import takes_out_sharding
from mjax.numpy.arguments import no_out
from mjax.numpy.conversion import asarray
from mjax.numpy.promotion import result_type


@takes_out_sharding
def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=None):
    """Einstein summation by pairwise dot_generals, in the order `optimize` gives
    (NumPy's path search for 'auto' with three or more operands).
    `_dot_general` replaces lax.dot_general for each contraction, as JAX's private argument
    does (flax passes its quantized or instrumented dot_generals)."""
    no_out("einsum", out)
    if not isinstance(subscripts, str):
        subscripts, operands = _sublist_subscripts(subscripts, *operands)
        return _einsum(subscripts, operands, precision, preferred_element_type,
                       _dot_general, optimize)
    # (JAX names an einsum's ops by its subscripts: HLO op names, TPU kernel traces)
    with named_scope(subscripts):
        return _einsum(subscripts, operands, precision, preferred_element_type,
                       _dot_general, optimize)


def _einsum(subscripts, operands, precision, preferred_element_type, _dot_general,
            optimize):
    # Every contraction accumulates in (and returns) `preferred_element_type`, by default
    # the operands' result type: float16 sums stay float16 here, as in JAX's einsum.
    if preferred_element_type is None:
        preferred_element_type, weak = _dt.result_type(*operands, return_weak_type_flag=True)
    else:
        preferred_element_type, weak = _dt.check_user_dtype(preferred_element_type,
                                                            "einsum"), False
    out = contract(subscripts, *operands, precision=precision,
                   dot_general=_dot_general or lax.dot_general,
                   preferred_element_type=preferred_element_type, optimize=optimize)
    return lax.convert_element_type(out, preferred_element_type, weak_type=weak)


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """The contraction order einsum would use, and a report (from NumPy's path search)."""
    if not isinstance(subscripts, str):
        subscripts, operands = _sublist_subscripts(subscripts, *operands)
    if optimize is True or optimize == "auto":
        # (as opt_einsum's 'auto', which JAX uses: exhaustive search for a few operands)
        optimize = "optimal" if len(operands) <= 4 else "greedy"
    shapes = [_onp.empty(_operand_shape(x), dtype=_onp.bool_) for x in operands]
    path, report = _onp.einsum_path(subscripts, *shapes, optimize=optimize)
    return [tuple(p) for p in path[1:]], report


def _sublist_subscripts(*args):
    """The interleaved form einsum(x, [0, 1], y, [1, 2], [0, 2]) as a subscripts string
    and its operands (axis labels are ints below 52, or Ellipsis)."""
    out = args[-1] if len(args) % 2 else None
    pairs = args[:len(args) - (out is not None)]
    operands, sublists = list(pairs[0::2]), list(pairs[1::2])
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def to_str(sub):
        chars = []
        for label in sub:
            if label is Ellipsis:
                chars.append("...")
                continue
            label = operator.index(label)
            if not 0 <= label < len(letters):
                raise ValueError(f"einsum: subscript label {label} is outside [0, 52)")
            chars.append(letters[label])
        return "".join(chars)

    subscripts = ",".join(to_str(sub) for sub in sublists)
    if out is not None:
        subscripts += "->" + to_str(out)
    return subscripts, operands


def _operand_shape(x):
    return x.shape if isinstance(x, Tracer) or hasattr(x, "shape") else _onp.shape(x)


_SYMBOLS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _expand_ellipsis(subscripts, ndims):
    """Replaces '...' by labels no subscript uses, taken in the order a, b, ..., z, A, ...
    (opt_einsum's, which JAX uses: the labels' alphabetical order orders contracted
    dimensions), right-aligned as in NumPy's broadcasting."""
    if "." not in subscripts:
        return subscripts
    ins, arrow, out = subscripts.partition("->")
    ins = ins.split(",")
    used = set(subscripts) - set(".,->")
    fresh = [c for c in _SYMBOLS if c not in used][:max(ndims, default=0)]
    longest = 0
    new_ins = []
    for t, nd in zip(ins, ndims):
        if "..." in t:
            k = 0 if nd == 0 else max(nd, 1) - (len(t) - 3)
            longest = max(longest, k)
            t = t.replace("...", "".join(fresh[len(fresh) - k:]) if k > 0 else "")
        new_ins.append(t)
    labels = "".join(fresh[len(fresh) - longest:]) if longest else ""
    if arrow:
        out = out.replace("...", labels)
    else:
        counts = {}
        for c in "".join(new_ins):
            counts[c] = counts.get(c, 0) + 1
        out = labels + "".join(sorted(c for c, k in counts.items()
                                      if k == 1 and c not in labels))
    return ",".join(new_ins) + "->" + out


def _parse(subscripts, n):
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins = subscripts
        counts = {}
        for c in ins.replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        out = "".join(sorted(c for c, k in counts.items() if k == 1))
    ins = ins.split(",")
    if len(ins) != n:
        raise ValueError(f"einsum: {len(ins)} subscripts for {n} operands")
    if "." in subscripts:
        raise NotImplementedError("einsum with '...' is not supported yet")
    return ins, out


def _contractions(ins, out, path):
    """opt_einsum's contraction list for `path`: per step, the operand positions (largest
    first: they are popped in that order), the labels summed away, and the step's input
    and output subscripts. An intermediate's labels are in order of first appearance in
    its inputs (tensordot's order); the last step's are `out`."""
    inputs, steps = list(ins), []
    for n, positions in enumerate(path):
        positions = tuple(sorted(positions, reverse=True))
        taken = [inputs.pop(i) for i in positions]
        kept = set(out).union(*map(set, inputs))
        involved = set("".join(taken))
        result = involved & kept
        if n == len(path) - 1:
            names = out
        else:
            joined = "".join(taken)
            names = "".join(sorted(result, key=joined.find))
        steps.append((positions, involved - result, taken, names))
        inputs.append(names)
    return steps


def _path(ins, out, ops, optimize):
    n = len(ops)
    if n <= 2:
        return [tuple(range(n))]
    if optimize is False:
        return [(0, 1)] * (n - 1)
    if isinstance(optimize, (list, tuple)) and optimize and optimize[0] == "einsum_path":
        return [tuple(p) for p in optimize[1:]]
    if isinstance(optimize, (list, tuple)):
        return [tuple(p) for p in optimize]
    spec = ",".join(ins) + "->" + out
    if optimize not in (True, "auto", "greedy", "optimal"):
        optimize = "greedy"  # (opt_einsum's other searches: NumPy has these two)
    return einsum_path(spec, *ops, optimize=optimize)[0]


def _sum(x, axes, preferred):
    # (in the preferred type where it is wider, as JAX's einsum sums)
    if preferred is not None and result_type(x, preferred) != x.dtype:
        x = x.astype(preferred)
    axes = tuple(axes)
    return lax.reduce_or(x, axes) if x.dtype == _onp.bool_ else lax.reduce_sum(x, axes)


def _sum_uniques(x, names, uniques, preferred):
    if uniques:
        x = _sum(x, [names.index(c) for c in uniques], preferred)
        names = "".join(c for c in names if c not in uniques)
    return x, names


def _delta(shape, axes):
    """True where the indices along `axes` are all equal (a Kronecker delta), broadcast
    to `shape`."""
    base = tuple(shape[a] for a in axes)
    iotas = [lax.broadcasted_iota(_onp.uint32, base, i) for i in range(len(base))]
    eyes = [lax.eq(p, q) for p, q in zip(iotas[:-1], iotas[1:])]
    eye = eyes[0]
    for e in eyes[1:]:
        eye = lax.bitwise_and(eye, e)
    return lax.broadcast_in_dim(eye, tuple(shape), tuple(axes))


def _sum_repeats(x, names, counts, keep, preferred):
    """A label repeated within one operand: its diagonal, by masking with a delta and
    summing all but one copy (all, when no later step keeps the label)."""
    for c, k in counts.items():
        if k > 1:
            axes = [i for i, n in enumerate(names) if n == c]
            x = lax.select(_delta(x.shape, axes), x, lax.full_like(x, 0))
            if c not in keep:
                x = _sum(x, axes, preferred)
                names = names.replace(c, "")
            else:
                x = _sum(x, axes[:-1], preferred)
                names = names.replace(c, "", k - 1)
    return x, names


def _drop_singletons(x, names, other_shape, other_names):
    """Squeezes the size-1 dims whose label the other operand has at a size other than 1
    (they broadcast against it)."""
    keep = [x.shape[i] != 1 or other_names.find(c) == -1 or other_shape[other_names.find(c)] == 1
            for i, c in enumerate(names)]
    gone = tuple(i for i, k in enumerate(keep) if not k)
    if gone:
        x = lax.squeeze(x, gone)
    return x, "".join(c for c, k in zip(names, keep) if k)


def contract(subscripts, *operands, precision=None, dot_general=lax.dot_general,
             preferred_element_type=None, optimize="auto"):
    """JAX's einsum, step for step (so its program): opt_einsum's contraction list, each
    step summing labels only one operand has, taking repeated labels' diagonals, then one
    dot_general, its operands in the order that needs no transpose when one does."""
    ops = [asarray(o) for o in operands]
    spec = _expand_ellipsis(subscripts.replace(" ", ""), [o.ndim for o in ops])
    ins, out = _parse(spec, len(operands))
    for o, t in zip(ops, ins):
        if o.ndim != len(t):
            raise ValueError(at_user_line(
                f"einsum: operand of shape {o.shape} has subscripts '{t}'"))
    sizes = {}
    for o, t in zip(ops, ins):
        for c, d in zip(t, o.shape):
            if sizes.get(c, 1) not in (1, d) and d != 1:
                raise ValueError(at_user_line(
                    f"einsum: size of label '{c}' for operand of shape {o.shape} ({d}) "
                    f"does not match previous terms ({sizes[c]})"))
            sizes[c] = d if sizes.get(c, 1) == 1 else sizes[c]
    pet = preferred_element_type
    for positions, removed, names_in, result in _contractions(
            ins, out, _path(ins, out, ops, optimize)):
        removed = sorted(removed)
        if len(positions) == 1:
            x = ops.pop(positions[0])
            names, = names_in
            counts = {c: names.count(c) for c in names}
            x, names = _sum_uniques(x, names, [c for c in removed if counts[c] == 1], pet)
            x, names = _sum_repeats(x, names, counts, result, pet)
        else:
            lhs, rhs = (ops.pop(i) for i in positions)
            ln, rn = names_in
            lhs, ln = _drop_singletons(lhs, ln, rhs.shape, rn)
            rhs, rn = _drop_singletons(rhs, rn, lhs.shape, ln)
            lcount = {c: ln.count(c) for c in ln}
            rcount = {c: rn.count(c) for c in rn}
            lhs, ln = _sum_uniques(lhs, ln, [c for c in removed if lcount.get(c, 0) == 1
                                             and rcount.get(c, 0) == 0], pet)
            rhs, rn = _sum_uniques(rhs, rn, [c for c in removed if rcount.get(c, 0) == 1
                                             and lcount.get(c, 0) == 0], pet)
            lhs, ln = _sum_repeats(lhs, ln, lcount, result + rn, pet)
            rhs, rn = _sum_repeats(rhs, rn, rcount, result + ln, pet)
            removed = [c for c in removed if c in set(ln) | set(rn)]
            batch = "".join(c for c in result if c in set(ln) & set(rn))
            gone = batch + "".join(removed)
            l_rest = "".join(c for c in ln if c not in gone)
            r_rest = "".join(c for c in rn if c not in gone)
            l_con, r_con = [ln.index(c) for c in removed], [rn.index(c) for c in removed]
            l_bat, r_bat = [ln.find(c) for c in batch], [rn.find(c) for c in batch]
            if batch + r_rest + l_rest == result:
                names = result
                x = dot_general(rhs, lhs, ((r_con, l_con), (r_bat, l_bat)),
                                precision=precision, preferred_element_type=pet)
            else:
                names = batch + l_rest + r_rest
                x = dot_general(lhs, rhs, ((l_con, r_con), (l_bat, r_bat)),
                                precision=precision, preferred_element_type=pet)
        if names != result:
            x = lax.transpose(x, tuple(names.index(c) for c in result))
        ops.append(x)
    return ops[0]
