"""Registrars for differentiation rules (JAX: interpreters/ad.py `defjvp`, `deflinear`).

A JVP rule, as stored in `JVP`, has one signature:

    rule(b, primals: list[Value], tangents: list[Value | None], **params)
        -> (primal outs: list[Value], tangent outs: list[Value | None])

`None` is a symbolic zero: no IR. Most ops register through `defjvp`, with one rule per
operand giving that operand's contribution to the output tangent:

    defjvp(MulOp,
           lambda b, t, x, y: b.mul(t, y),
           lambda b, t, x, y: b.mul(x, t))
    defjvp(ExpOp, lambda b, t, x, *, ans: b.mul(t, ans))   # `ans`: the primal output

A transpose rule (only for ops linear in some operands), as stored in `TRANSPOSE`:

    rule(b, ct, *args, **params) -> list[Value | None]   (one cotangent per operand)

where `ct` is the output cotangent (a list for multi-result ops, None for zero entries)
and each arg is either an `ir.Value` (a non-linear operand, available in the backward
pass) or a `Linear` marker with the operand's aval (JAX: `UndefinedPrimal`).

An op given a JVP by `defjvp` / `jvp_rule` / `defzero` and no transpose rule is "not
linear" in the coverage table without being listed again: the JVP registrars record that
reason, and a transpose rule registered for the op takes precedence over it.
"""
from __future__ import annotations

import inspect

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.ops.transforms import differentiable
from mjax.dialect.types import ShapedArray, aval_of
from mjax.passes.rules.tables import JVP, TRANSPOSE, ZERO_DERIVATIVE


class Linear:
    """An operand of a linear op that is itself linear (its value is not available in
    the backward pass). JAX: ad.UndefinedPrimal."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"Linear({self.aval.str_short()})"


class Unknown(Linear):
    """A linear entry whose value has been emitted into the unknown block of a partial
    evaluation (passes/partial_eval.py)."""

    __slots__ = ("value",)

    def __init__(self, value: ir.Value):
        super().__init__(aval_of(value.type))
        self.value = value


def is_linear(x) -> bool:
    return isinstance(x, Linear)


def aval(x) -> ShapedArray:
    return x.aval if isinstance(x, Linear) else aval_of(x.type)


def has_tangent(a: ShapedArray) -> bool:
    """Whether values of `a` carry tangents: float and complex arrays (not refs)."""
    return differentiable(a)


def constant(b, array) -> ir.Value:
    """A jaxpr.constant holding `array` with its exact shape and dtype."""
    return b.constant(array)


def zeros(b, a: ShapedArray) -> ir.Value:
    return b.constant(np.zeros((), dtype=a.dtype), shape=a.shape)


def full_like(b, x, fill) -> ir.Value:
    # (the one value broadcast, not np.full of the whole shape: it becomes a splat)
    a = aval(x)
    return b.constant(np.full((), fill, dtype=a.dtype), shape=a.shape)


def zeros_like(b, x) -> ir.Value:
    return full_like(b, x, 0)


def instantiate(b, t, a: ShapedArray) -> ir.Value:
    """A concrete tangent: `t`, or zeros of aval `a` for a symbolic zero."""
    return zeros(b, a) if t is None else t


# Marks a jaxpr.add that sums tangents or cotangents, JAX's `add_any` (make_jaxpr prints
# it so; it lowers and transforms as the add it is).
ADD_ANY = "mjax.add_any"


def add_any(b, x, y):
    """x + y where both are tangents (or cotangents) of one value: JAX's add_any."""
    out = b.add(x, y)
    out.owner.operation.attributes[ADD_ANY] = ir.UnitAttr.get()
    return out


def add_tangents(b, x, y):
    if x is None:
        return y
    if y is None:
        return x
    return add_any(b, x, y)


# ---- lax's implicit broadcasting ----------------------------------------------------
# JAX's binary lax ops take a scalar or a same-rank operand with size-1 dims as it is, so
# their JVP rules compute on the small operand (div's y ** -2 on the (b, t, 1) sum of a
# softmax, not on its broadcast). mjax stages that broadcast as a broadcast_in_dim; rules
# that apply a nonlinear function to an operand look through it with lax_operand and
# combine with lax_binary, so XLA gets JAX's program.
def lax_operand(v):
    """The value `v` was broadcast from when `v` is a broadcast_in_dim of lax's implicit
    kind (a scalar, or an operand of the same rank stretched along size-1 dims); else v."""
    if isinstance(v, Linear):
        return v
    owner = v.owner
    if isinstance(owner, ir.Block):
        return v
    owner = owner.operation
    if owner.name != "jaxpr.broadcast_in_dim":
        return v
    src = owner.operands[0]
    rank = ir.RankedTensorType(src.type).rank
    if rank == 0:
        return src
    dims = list(ir.DenseI64ArrayAttr(owner.attributes["broadcast_dimensions"]))
    if rank == ir.RankedTensorType(v.type).rank and dims == list(range(rank)):
        return src
    return v


def lax_binary(b, name: str, x, y):
    """The binary op `name` of x and y, one broadcast to the other's shape as lax does."""
    sx, sy = aval(x).shape, aval(y).shape
    if sx != sy:
        # (a 1 broadcasts to the other's size, 0 included)
        shape = tuple(q if p == 1 else p for p, q in zip(sx, sy)) if sx and sy else (sx or sy)
        x, y = (v if aval(v).shape == shape else _implicit_broadcast(b, v, shape)
                for v in (x, y))
    return getattr(b, name)(x, y)


# (the frontend's mark of the broadcasts lax makes implicitly: make_jaxpr leaves them out)
IMPLICIT_BROADCAST = "mjax.implicit_broadcast"


def _implicit_broadcast(b, v, shape):
    out = b.broadcast_in_dim(v, shape=shape,
                             broadcast_dimensions=tuple(range(len(aval(v).shape))))
    out.owner.operation.attributes[IMPLICIT_BROADCAST] = ir.UnitAttr.get()
    return out


# ---- JVP ---------------------------------------------------------------------------
_NOT_LINEAR = "not linear in its operands"


def _set_jvp(op, rule) -> None:
    JVP[op] = rule
    TRANSPOSE.unsupported(op, _NOT_LINEAR, replace=False)


def jvp_rule(*ops):
    """Decorator: registers a full JVP rule `rule(b, primals, tangents, **params)`."""
    def wrap(rule):
        for op in ops:
            _set_jvp(op, rule)
        return rule
    return wrap


def _wants_ans(fn) -> bool:
    try:
        return "ans" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def defjvp(op, *operand_rules):
    """Per-operand JVP rules `r(b, t, *primals, **params)` (None: no contribution).

    A rule naming a parameter `ans` also receives the primal output. Contributions are
    summed; symbolic-zero tangents are skipped, never multiplied."""
    wants = [r is not None and _wants_ans(r) for r in operand_rules]

    def rule(b, primals, tangents, **params):
        out = b.emit(op, *primals, **params)
        ans = out[0]
        if not has_tangent(aval_of(ans.type)):
            return out, [None]
        acc = None
        for t, r, w in zip(tangents, operand_rules, wants):
            if t is None or r is None:
                continue
            d = r(b, t, *primals, ans=ans, **params) if w else r(b, t, *primals, **params)
            if acc is None:
                acc = d
            elif d is not None:
                acc = add_any(b, acc, d)
        return out, [acc]
    _set_jvp(op, rule)
    return rule


def deflinear_jvp(op):
    """JVP of an op linear in all operands: the same op applied to the tangents
    (symbolic zeros instantiated where only some operands have tangents)."""
    def rule(b, primals, tangents, **params):
        out = b.emit(op, *primals, **params)
        if not has_tangent(aval_of(out[0].type)):
            return out, [None] * len(out)
        ts = [zeros(b, aval_of(p.type)) if t is None else t
              for p, t in zip(primals, tangents)]
        return out, b.emit(op, *ts, **params)
    JVP[op] = rule
    return rule


def defzero(op, why: str = "piecewise constant: the derivative is zero (as in JAX)"):
    """The op's outputs get zero tangents (e.g. floor, sign, comparisons): the one
    statement of it, in `ZERO_DERIVATIVE` (which the frontend queries through
    `tables.has_zero_derivative`) and as the op's JVP rule."""
    def rule(b, primals, tangents, **params):
        out = b.emit(op, *primals, **params)
        return out, [None] * len(out)
    JVP[op] = rule
    ZERO_DERIVATIVE[op] = why
    TRANSPOSE.unsupported(op, "not linear: " + why)
    return rule


def no_jvp(op, why: str):
    JVP.unsupported(op, why)


def no_transpose(op, why: str = "not linear in any operand"):
    TRANSPOSE.unsupported(op, why)


# ---- transpose ---------------------------------------------------------------------
def transpose_rule(*ops):
    """Decorator: registers `rule(b, ct, *args, **params) -> [ct per operand]`."""
    return TRANSPOSE.register(*ops)


def deflinear(op, transpose):
    """An op linear in every operand: JVP applies the op to tangents, and `transpose(b,
    ct, *args, **params)` returns one cotangent per operand."""
    deflinear_jvp(op)
    TRANSPOSE[op] = transpose


__all__ = ["Linear", "Unknown", "is_linear", "aval", "has_tangent", "constant", "zeros",
           "full_like", "zeros_like", "instantiate",
           "add_tangents", "jvp_rule", "defjvp", "deflinear_jvp", "defzero", "no_jvp",
           "no_transpose", "transpose_rule", "deflinear"]
