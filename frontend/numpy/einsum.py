"""`einsum`, as a sequence of pairwise `dot_general`s (left to right), and `einsum_path`
(NumPy's contraction path search)."""
from __future__ import annotations

import operator

import numpy as _onp

from mjax import dtypes as _dt, lax
from mjax.core import at_user_line, Tracer
from mjax.lax.sharding import takes_out_sharding
from mjax.numpy import reductions
from mjax.numpy.arguments import no_out
from mjax.numpy.conversion import asarray
from mjax.numpy.products import diagonal
from mjax.numpy.promotion import broadcast_to, result_type
from mjax.numpy.shaping import transpose


@takes_out_sharding
def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=None):
    """Einstein summation by pairwise dot_generals (left to right). (`optimize` picks a
    contraction order in JAX; mjax contracts left to right whatever it says.)
    `_dot_general` replaces lax.dot_general for each contraction, as JAX's private argument
    does (flax passes its quantized or instrumented dot_generals)."""
    no_out("einsum", out)
    if not isinstance(subscripts, str):
        subscripts, operands = _sublist_subscripts(subscripts, *operands)
    # Every contraction accumulates in (and returns) `preferred_element_type`, by default
    # the operands' result type: float16 sums stay float16 here, as in JAX's einsum.
    if preferred_element_type is None:
        preferred_element_type, weak = _dt.result_type(*operands, return_weak_type_flag=True)
    else:
        preferred_element_type, weak = _dt.check_user_dtype(preferred_element_type,
                                                            "einsum"), False
    out = contract(subscripts, *operands, precision=precision,
                   dot_general=_dot_general or lax.dot_general,
                   preferred_element_type=preferred_element_type)
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


def _expand_ellipsis(subscripts, ndims):
    """Replaces '...' by fresh labels, right-aligned as in NumPy's broadcasting."""
    if "." not in subscripts:
        return subscripts
    ins, arrow, out = subscripts.partition("->")
    ins = ins.split(",")
    used = set(subscripts) - set(".,->")
    fresh = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    n_ell = max((nd - (len(t) - 3) for t, nd in zip(ins, ndims) if "..." in t), default=0)
    labels = "".join(fresh[:n_ell])
    new_ins = []
    for t, nd in zip(ins, ndims):
        if "..." in t:
            k = nd - (len(t) - 3)
            t = t.replace("...", labels[n_ell - k:] if k else "")
        new_ins.append(t)
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


def _reduce_own(x, labels, keep, preferred):
    """Sums out labels used only by this operand; takes diagonals of repeated labels."""
    # repeated label in one operand -> diagonal
    while len(set(labels)) != len(labels):
        for c in labels:
            if labels.count(c) > 1:
                i = labels.index(c)
                j = labels.index(c, i + 1)
                x = diagonal(x, 0, i, j)
                labels = [l for k, l in enumerate(labels) if k not in (i, j)] + [c]
                break
    drop = [i for i, c in enumerate(labels) if c not in keep]
    if drop:
        # (in `preferred` where it is wider than x, else in x's dtype: never upcast further)
        dtype = x.dtype if preferred is None or result_type(x, preferred) == x.dtype \
            else preferred
        x = reductions.sum(x, axis=tuple(drop), dtype=dtype)
        labels = [c for i, c in enumerate(labels) if i not in drop]
    return x, labels


def contract(subscripts, *operands, precision=None, dot_general=lax.dot_general,
             preferred_element_type=None):
    ops = [asarray(o) for o in operands]
    ins, out = _parse(_expand_ellipsis(subscripts.replace(" ", ""), [o.ndim for o in ops]),
                      len(operands))
    for o, s in zip(ops, ins):
        if o.ndim != len(s):
            raise ValueError(at_user_line(
                f"einsum: operand of shape {o.shape} has subscripts '{s}'"))
    terms = [list(s) for s in ins]
    # Size-1 dimensions broadcast against the same label elsewhere (NumPy's rule for '...').
    sizes = {}
    for o, t in zip(ops, terms):
        for c, d in zip(t, o.shape):
            sizes[c] = d if sizes.get(c, 1) == 1 else sizes[c]  # (0 is a size, not 1)
    ops = [broadcast_to(o, tuple(sizes[c] for c in t)) if any(
        d != sizes[c] for c, d in zip(t, o.shape)) else o for o, t in zip(ops, terms)]
    x, lx = ops[0], terms[0]
    rest = list(zip(ops[1:], terms[1:]))
    needed_later = lambda k: set(out).union(*[set(t) for _, t in rest[k:]])  # noqa: E731
    pet = preferred_element_type
    x, lx = _reduce_own(x, lx, needed_later(0), pet)
    for k, (y, ly) in enumerate(rest):
        keep = needed_later(k + 1)
        y, ly = _reduce_own(y, ly, keep | set(lx), pet)
        x, lx = _reduce_own(x, lx, keep | set(ly), pet)
        dtype = result_type(x, y)
        x, y = x.astype(dtype), y.astype(dtype)
        common = [c for c in lx if c in ly]
        batch = [c for c in common if c in keep]
        contract = [c for c in common if c not in keep]
        dn = (([lx.index(c) for c in contract], [ly.index(c) for c in contract]),
              ([lx.index(c) for c in batch], [ly.index(c) for c in batch]))
        x = dot_general(x, y, dn, precision=precision, preferred_element_type=pet)
        lx = batch + [c for c in lx if c not in common] + [c for c in ly if c not in common]
    x, lx = _reduce_own(x, lx, set(out), pet)
    return transpose(x, [lx.index(c) for c in out]) if lx else x
