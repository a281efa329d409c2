"""Deciding comparisons of dimension expressions (shape_poly.py): bounds of each
variable (from 1 up, narrowed by a scope's constraints), interval arithmetic over the
monomials, the scope's facts and what floordiv/mod/max/min imply, alone or in pairs, and
a case split over max/min. A comparison none of these settles raises
`InconclusiveDimensionOperation`, as JAX's does. JAX: shape_poly_decision.py.
"""
from __future__ import annotations

import math


class UnexpectedDimVar(KeyError):
    """A dimension variable that no argument's shape determines (JAX's class)."""


class InconclusiveDimensionOperation(Exception):
    """A comparison or conversion of symbolic dimensions that their bounds and the
    scope's constraints do not decide (JAX's class of the same name)."""


def _interval_mul(a, b):
    products = [x * y if not (x == 0 or y == 0) else 0 for x in a for y in b]
    return min(products), max(products)


def _bounds(e, scope) -> tuple[float, float]:
    if isinstance(e, int):
        return e, e
    lo = hi = 0
    for mono, c in e._terms.items():
        b = (1, 1)
        for atom, p in mono:
            ab = _atom_bounds(atom, scope)
            for _ in range(p):
                b = _interval_mul(b, ab)
        b = _interval_mul(b, (c, c))
        lo, hi = lo + b[0], hi + b[1]
    return lo, hi


def _atom_bounds(atom, scope) -> tuple[float, float]:
    if atom.op == "var":
        return scope._variable_bounds(atom.args[0])
    (alo, ahi), (blo, bhi) = (_bounds(a, scope) for a in atom.args)
    if atom.op == "max":
        return max(alo, blo), max(ahi, bhi)
    if atom.op == "min":
        return min(alo, blo), min(ahi, bhi)
    if atom.op == "mod":                         # the divisor's sign, |mod| < |b|
        if blo >= 1:
            return 0, bhi - 1
        if bhi <= -1:
            return blo + 1, 0
    if atom.op == "floordiv" and (blo >= 1 or bhi <= -1):
        # a // b is monotone in a and b on each side of 0: the corners bound it
        corners = [_floor_div_limit(x, y) for x in (alo, ahi) for y in (blo, bhi)]
        return min(corners), max(corners)
    return -math.inf, math.inf


def _floor_div_limit(x, y) -> float:
    if math.isinf(y):
        return 0 if not math.isinf(x) else (-math.inf if (x < 0) == (y > 0) else math.inf)
    if math.isinf(x):
        return x if y > 0 else -x
    return math.floor(x / y)


def _known_ge0(e, scope) -> bool | None:
    """True if e >= 0 is certain, False if e < 0 is, None if undecided."""
    lo, hi = _bounds(e, scope)
    if lo >= 0:
        return True
    if hi < 0:
        return False
    # Facts f >= 0 (the scope's, and what e's operations imply), alone or in pairs:
    # e - f (- g) >= 0 by the bounds proves e >= 0; -e - 1 - f (- g) >= 0 proves e < 0.
    facts = [sign * f for f, kind in scope._facts + _implied_facts(e)
             for sign in ((1, -1) if kind == "==" else (1,))]
    combos = [0] + facts + [f + g for k, f in enumerate(facts) for g in facts[k:]]
    for f in combos:
        if _bounds(e - f, scope)[0] >= 0:
            return True
        if _bounds(-e - 1 - f, scope)[0] >= 0:
            return False
    return _by_cases(e, scope)


def _by_cases(e, scope, depth: int = 0) -> bool | None:
    """e >= 0 for e = r - c*max(x, y) (c > 0) holds when both r - c*x and r - c*y are
    >= 0; likewise r + c*min(x, y). So `b >= max(b - 2, 0)` is decided."""
    if depth > 2 or isinstance(e, int):
        return (e >= 0) or None if isinstance(e, int) else None
    for mono, c in e._terms.items():
        if len(mono) != 1 or mono[0][1] != 1:
            continue
        atom = mono[0][0]
        if (atom.op, c < 0) not in (("max", True), ("min", False)):
            continue
        rest = e - type(e)._make({mono: c}, e._scope)
        cases = [rest + c * arg for arg in atom.args]
        if all(_known_ge0_simple(x, scope, depth) for x in cases):
            return True
    return None


def _known_ge0_simple(e, scope, depth) -> bool:
    if isinstance(e, int):
        return e >= 0
    return _bounds(e, scope)[0] >= 0 or _by_cases(e, scope, depth + 1) is True


def _implied_facts(e) -> list:
    """What the operations in e (nested ones included) imply: max(x, y) >= x, y;
    min(x, y) <= x, y; x >= k*floordiv(x, k) > x - k for k >= 1; b - 1 >= mod(x, b)
    for b >= 1 and mod(x, b) >= b + 1 for b <= -1."""
    facts, seen = [], set()

    def visit(expr):
        if isinstance(expr, int):
            return
        for mono in expr._terms:
            for atom, _ in mono:
                if atom.op == "var" or atom in seen:
                    continue
                seen.add(atom)
                m = type(expr)._atom(atom, expr._scope)
                x, y = atom.args
                if atom.op in ("max", "min"):
                    for arg in (x, y):
                        facts.append((m - arg if atom.op == "max" else arg - m, ">="))
                elif atom.op == "floordiv" and isinstance(y, int) and y >= 1:
                    # k*floordiv(x, k) <= x <= k*floordiv(x, k) + k - 1
                    facts.extend([(x - y * m, ">="), (y * m - x + y - 1, ">=")])
                elif atom.op == "mod":
                    lo, hi = _bounds(y, expr._scope)
                    if lo >= 1:
                        facts.append((y - 1 - m, ">="))
                    elif hi <= -1:
                        facts.append((m - y - 1, ">="))
                for arg in (x, y):
                    visit(arg)
    visit(e)
    return [(f, kind) for f, kind in facts if not isinstance(f, int)]


def _known_zero(e, scope=None) -> bool:
    """e == 0 by an equality constraint (e is one up to sign)."""
    scope = scope or e._scope

    def zero(d):   # (structurally: == would come back here)
        return isinstance(d, int) and d == 0
    return any(kind == "==" and (zero(e - fact) or zero(e + fact))
               for fact, kind in scope._facts)


def _decide_ge(a, b, op, scope, shown):
    """a >= b, decided; shown: the operands as the user wrote them, for the error."""
    diff = a - b
    verdict = (diff >= 0) if isinstance(diff, int) else _known_ge0(diff, scope)
    if verdict is None:
        x, y = shown
        scope_note = f"\nUsing symbolic {scope}" if scope._constraints_str else ""
        raise InconclusiveDimensionOperation(
            f"Symbolic dimension comparison '{x}' {op} '{y}' is inconclusive.{scope_note}\n"
            "The comparison's result depends on the values of the dimension variables; "
            "add a constraint (symbolic_shape(..., constraints=...)) that decides it.")
    return verdict
