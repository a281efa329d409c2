"""The result types of binding an op: checked params and result avals, weak types
included, with the user's line on bad operands. Tracing and eager mode both ask here."""
from __future__ import annotations

from mjax.dialect.core import InferError
from mjax.dialect.types import ShapedArray
from mjax.tracing.source_info import describe_location, user_location

# (op class, weak, operand avals) -> result avals, for ops without attributes on plain
# ShapedArrays (elementwise ops, most of a traced program): their rule depends on the
# avals alone, and tracing asks the same question again and again.
_INFERRED: dict = {}
_MAX_INFERRED = 4096


class OperandValueError(TypeError, ValueError):
    """Operands an op refuses where JAX raises a ValueError (an axis out of range): also a
    TypeError, as mjax's other operand errors are."""


def infer_avals(opcls, avals, params, weak=None):
    """(checked params, result avals with weak types) for binding `opcls`; TypeError with
    the user's line on bad operands."""
    if not params and not opcls.attributes:
        key = (opcls, weak, tuple(map(type, avals)), *avals)
        try:
            hit = _INFERRED.get(key)
        except Exception:      # (an unhashable or inconclusive symbolic dimension)
            hit = key = None
        if hit is not None:
            return {}, list(hit)
        params, out = _infer_avals(opcls, avals, params, weak)
        if key is not None and all(t is ShapedArray for t in key[2]) and \
                all(type(a) is ShapedArray for a in out):
            if len(_INFERRED) >= _MAX_INFERRED:
                _INFERRED.clear()
            _INFERRED[key] = tuple(out)
        return params, out
    return _infer_avals(opcls, avals, params, weak)


def _infer_avals(opcls, avals, params, weak):
    try:
        params = opcls.check_params(params)
        out_avals = opcls.infer_checked([a.strip_weak_type() for a in avals], params,
                                        params_checked=True)
    except InferError as e:
        loc = describe_location(user_location())
        cls = OperandValueError if isinstance(e, ValueError) else TypeError
        raise cls(f"{e} (in {opcls.OPERATION_NAME} at {loc})") from None
    # (JAX's weak-type rule is the op class's: JaxprOp.weak_result.)
    w = weak if weak is not None else opcls.weak_result(avals)
    # (A new aval only where the weak type changes: most results keep the inferred one.)
    return params, [a if a.weak_type == w else a.update(weak_type=w) for a in out_avals]
