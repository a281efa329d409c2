"""Symbolic dimensions (shape polymorphism) as `jax.export` spells them.

`symbolic_shape("b, 2*b + 1")` gives dimension expressions: integer polynomials over
dimension variables (each >= 1) and the operations `floordiv`, `mod`, `max` and `min`
of expressions, kept in a normal form (a sum of monomials with integer coefficients), so
equal expressions compare equal. Comparisons are decided from bounds: each variable's
range (from 1 up, narrowed by a `SymbolicScope`'s constraints such as "b >= 4"), interval
arithmetic over the monomials, and the scope's constraints between expressions ("c <=
a"); a comparison the bounds do not settle raises `InconclusiveDimensionOperation`, as
JAX's does. Equality is structural: `b == 4` is False.

This module is the vocabulary only: tracing, lowering and `export` with symbolic
dimensions are not built yet (export raises NotImplementedError naming them).
"""
from __future__ import annotations

import math
import re
import traceback
from typing import Sequence

import numpy as np

from mjax.errors import InconclusiveDimensionOperation


class SymbolicScope:
    """The constraints that dimension variables share; expressions from different
    scopes do not mix. JAX: jax.export.SymbolicScope."""

    def __init__(self, constraints_str: Sequence[str] = ()):
        if isinstance(constraints_str, str):
            raise ValueError("The symbolic constraints should be a sequence of strings. "
                             f"Got {constraints_str!r}")
        frame = traceback.extract_stack(limit=4)[0]
        self._location = f"{frame.filename}:{frame.lineno}"
        self._constraints_str = tuple(constraints_str)
        self._bounds: dict[str, tuple[float, float]] = {}
        self._facts: list[tuple[_DimExpr | int, str]] = []  # (e, ">=" or "==") over 0
        for c in self._constraints_str:
            self._add_constraint(c)

    def _add_constraint(self, text: str) -> None:
        m = re.fullmatch(r"(.+?)\s*(>=|<=|==|>|<)\s*(.+)", text.strip())
        if m is None:
            raise ValueError(f"Invalid constraint {text!r}: expected a comparison of two "
                             "dimension expressions with >=, <=, >, < or ==")
        lhs, op, rhs = (_parse_expr(m.group(1), self, text), m.group(2),
                        _parse_expr(m.group(3), self, text))
        diff = {">=": lhs - rhs, ">": lhs - rhs - 1, "<=": rhs - lhs, "<": rhs - lhs - 1,
                "==": lhs - rhs}[op]
        kind = "==" if op == "==" else ">="
        if isinstance(diff, int):
            if (diff != 0) if kind == "==" else (diff < 0):
                raise ValueError(f"Unsatisfiable explicit constraint: {text}")
            return
        var = diff._single_variable()
        if var is not None and kind == ">=":
            # c*v + k >= 0 narrows v's range
            name, coeff, const = var
            lo, hi = self._bounds.get(name, (1, math.inf))
            if coeff > 0:
                lo = max(lo, math.ceil(-const / coeff))
            else:
                hi = min(hi, math.floor(const / -coeff))
            self._bounds[name] = (lo, hi)
        self._facts.append((diff, kind))

    def _variable_bounds(self, name: str) -> tuple[float, float]:
        return self._bounds.get(name, (1, math.inf))

    def __str__(self):
        if not self._constraints_str:
            return "default scope"
        return (f"scope created at {self._location} with constraints:\n  "
                + "\n  ".join(self._constraints_str))

    __repr__ = __str__


class _Atom:
    """A dimension variable, or an operation (floordiv, mod, max, min) of two operands."""

    __slots__ = ("op", "args", "_key")

    def __init__(self, op: str, args: tuple):
        self.op, self.args = op, args
        self._key = (op, tuple(a if isinstance(a, (int, str)) else a._key_terms()
                               for a in args))

    def __eq__(self, other):
        return isinstance(other, _Atom) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __str__(self):
        if self.op == "var":
            return self.args[0]
        # (a negative constant operand prints as "- 3", as JAX's expressions do)
        args = (f"- {-a}" if isinstance(a, int) and a < 0 else str(a) for a in self.args)
        return f"{self.op}({', '.join(args)})"

    def evaluate(self, env: dict) -> int:
        if self.op == "var":
            return env[self.args[0]]
        x, y = (_evaluate(a, env) for a in self.args)
        return {"max": max, "min": min, "mod": lambda p, q: p % q,
                "floordiv": lambda p, q: p // q}[self.op](x, y)

    # ---- the printing order: by a syntactic size, then names (JAX prints the same way,
    # so the same expression reads the same in both) ----
    def size(self) -> int:
        return 1 if self.op == "var" else 1 + sum(_size(a) for a in self.args)

    def sort_key(self):
        if self.op == "var":
            return (1, self.args[0])
        return (self.size(), "", self.op, tuple(_expr_key(a) for a in self.args))


def _evaluate(x, env: dict) -> int:
    """The value of a dimension (expression) for the variables' values in env."""
    if isinstance(x, int):
        return x
    return sum(c * math.prod(atom.evaluate(env) ** p for atom, p in mono)
               for mono, c in x._terms.items())


def _size(x) -> int:
    if isinstance(x, int):
        return 0 if x == 0 else 1
    return sum(1 + abs(c) * _mono_size(m) for m, c in x._terms.items())


def _mono_size(mono) -> int:
    return sum(1 + p * atom.size() for atom, p in mono)


def _mono_key(mono):
    return (_mono_size(mono), tuple((atom.sort_key(), p) for atom, p in mono))


def _sorted_terms(e) -> list:
    """(monomial, coefficient) pairs, larger first (the constant last)."""
    return sorted(e._terms.items(), key=lambda mc: (_mono_key(mc[0]), mc[1]), reverse=True)


def _expr_key(x):
    if isinstance(x, int):
        return (_size(x), (((0, ()), x),) if x else ())
    return (_size(x), tuple((_mono_key(m), c) for m, c in _sorted_terms(x)))


def _monomial_str(mono) -> str:
    return "*".join(str(atom) + (f"^{p}" if p > 1 else "") for atom, p in mono)


class _DimExpr:
    """A dimension expression: {monomial: coefficient}, a monomial being a sorted tuple
    of (atom, power); the empty monomial is the constant. Never a bare constant: the
    operations return Python ints for those."""

    __slots__ = ("_terms", "_scope")

    def __init__(self, terms: dict, scope: SymbolicScope):
        self._terms, self._scope = terms, scope

    # ---- construction ------------------------------------------------------------------
    @staticmethod
    def _make(terms: dict, scope: SymbolicScope):
        terms = {m: c for m, c in terms.items() if c != 0}
        if not terms:
            return 0
        if list(terms) == [()]:
            return terms[()]
        return _DimExpr(terms, scope)

    @staticmethod
    def _atom(atom: _Atom, scope: SymbolicScope) -> _DimExpr:
        return _DimExpr({((atom, 1),): 1}, scope)

    def _key_terms(self):
        return tuple(sorted(((tuple((a._key, p) for a, p in m), c)
                             for m, c in self._terms.items()), key=repr))

    def _single_variable(self):
        """(name, coefficient, constant) if this is c*v + k for one variable v."""
        nonconst = [(m, c) for m, c in self._terms.items() if m]
        if len(nonconst) != 1:
            return None
        (mono, coeff), = nonconst
        if len(mono) != 1 or mono[0][1] != 1 or mono[0][0].op != "var":
            return None
        return mono[0][0].args[0], coeff, self._terms.get((), 0)

    # ---- arithmetic ----------------------------------------------------------------------
    def _other(self, other):
        if isinstance(other, _DimExpr):
            if other._scope is not self._scope:
                raise ValueError(
                    "Invalid mixing of symbolic scopes: "
                    f"{self} is of {self._scope} and {other} is of {other._scope}")
            return other._terms
        if not _is_int(other):
            if isinstance(other, (float, complex, np.ndarray, np.generic)):
                # (JAX computes with the dimension as an array value)
                raise NotImplementedError(
                    f"'{self}' combined with {other!r}: a symbolic dimension used as an "
                    "array value needs tracing with symbolic dimensions (not implemented "
                    "in mjax yet)")
            return None
        return {(): int(other)}

    def __add__(self, other):
        t = self._other(other)
        if t is None:
            return NotImplemented
        out = dict(self._terms)
        for m, c in t.items():
            out[m] = out.get(m, 0) + c
        return _DimExpr._make(out, self._scope)

    __radd__ = __add__

    def __neg__(self):
        return _DimExpr._make({m: -c for m, c in self._terms.items()}, self._scope)

    def __sub__(self, other):
        t = self._other(other)
        if t is None:
            return NotImplemented
        return self + _DimExpr._make({m: -c for m, c in t.items()}, self._scope)

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        t = self._other(other)
        if t is None:
            return NotImplemented
        out: dict = {}
        for m1, c1 in self._terms.items():
            for m2, c2 in t.items():
                m = _mono_mul(m1, m2)
                out[m] = out.get(m, 0) + c1 * c2
        return _DimExpr._make(out, self._scope)

    __rmul__ = __mul__

    def __pow__(self, power):
        if not _is_int(power) or power < 0:
            return NotImplemented
        out = 1
        for _ in range(int(power)):
            out = out * self
        return out

    def __floordiv__(self, other):
        return _divmod(self, other, self._scope)[0]

    def __rfloordiv__(self, other):
        return _divmod(other, self, self._scope)[0]

    def __mod__(self, other):
        return _divmod(self, other, self._scope)[1]

    def __rmod__(self, other):
        return _divmod(other, self, self._scope)[1]

    def __divmod__(self, other):
        return _divmod(self, other, self._scope)

    def __truediv__(self, other):
        # (JAX computes a / b as an array value: dimensions as values need tracing)
        raise NotImplementedError(
            f"'{self}' / {other!r}: true division makes a symbolic dimension an array "
            "value, which needs tracing with symbolic dimensions (not implemented in mjax "
            "yet); // and % stay dimensions")

    __rtruediv__ = __truediv__

    # ---- comparisons ---------------------------------------------------------------------
    def __eq__(self, other):
        if isinstance(other, _DimExpr) and other._scope is not self._scope or not (
                isinstance(other, _DimExpr) or _is_int(other)):
            return False
        diff = self - other
        return isinstance(diff, int) and diff == 0 or (
            not isinstance(diff, int) and _known_zero(diff))

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self._key_terms())

    def __ge__(self, other):
        return _decide_ge(self, other, ">=", self._scope, (self, other))

    def __gt__(self, other):
        return _decide_ge(self, other + 1, ">", self._scope, (self, other))

    def __le__(self, other):
        return _decide_ge(other, self, "<=", self._scope, (self, other))

    def __lt__(self, other):
        return _decide_ge(other, self + 1, "<", self._scope, (self, other))

    def __bool__(self):
        return self != 0

    def __int__(self):
        raise InconclusiveDimensionOperation(
            f"Symbolic dimension '{self}' used in a context that requires a constant")

    def __float__(self):
        raise TypeError(f"float() argument must be a string or a real number, not a "
                        f"symbolic dimension ('{self}')")

    # ---- printing --------------------------------------------------------------------------
    def __str__(self):
        parts = []
        for mono, c in _sorted_terms(self):
            body = _monomial_str(mono)
            mag = abs(c)
            text = body if mono and mag == 1 else (f"{mag}*{body}" if mono else str(mag))
            if not parts:
                parts.append(f"- {text}" if c < 0 else text)
            else:
                parts.append(f"{'-' if c < 0 else '+'} {text}")
        return " ".join(parts)

    __repr__ = __str__

    def __jax_array__(self):
        raise InconclusiveDimensionOperation(
            f"Symbolic dimension '{self}' used as an array value: shape polymorphism in "
            "traced computations is not implemented in mjax yet")


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _mono_mul(m1, m2):
    powers: dict = {}
    for atom, p in m1 + m2:
        powers[atom] = powers.get(atom, 0) + p
    return tuple(sorted(powers.items(), key=lambda ap: ap[0].sort_key()))


# ---- bounds and decisions ----------------------------------------------------------------
def _interval_mul(a, b):
    products = [x * y if not (x == 0 or y == 0) else 0 for x in a for y in b]
    return min(products), max(products)


def _bounds(e, scope: SymbolicScope) -> tuple[float, float]:
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


def _atom_bounds(atom: _Atom, scope) -> tuple[float, float]:
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
    return None


def _implied_facts(e) -> list:
    """What the operations in e (nested ones included) imply: max(x, y) >= x, y;
    min(x, y) <= x, y; b - 1 >= mod(x, b) for b >= 1 and mod(x, b) >= b + 1 for b <= -1."""
    facts, seen = [], set()

    def visit(expr):
        if isinstance(expr, int):
            return
        for mono in expr._terms:
            for atom, _ in mono:
                if atom.op == "var" or atom in seen:
                    continue
                seen.add(atom)
                m = _DimExpr._atom(atom, expr._scope)
                x, y = atom.args
                if atom.op in ("max", "min"):
                    for arg in (x, y):
                        facts.append((m - arg if atom.op == "max" else arg - m, ">="))
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
    scope = scope or e._scope
    return any(kind == "==" and (e - fact == 0 or e + fact == 0)
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


# ---- floordiv, mod, max, min -------------------------------------------------------------------
def _divmod(a, b, scope):
    if isinstance(a, int) and isinstance(b, int):
        return divmod(a, b)
    if isinstance(a, int) and a == 0:
        return 0, 0
    if isinstance(b, int):
        if b == 0:
            raise ZeroDivisionError(f"division of '{a}' by zero")
        rest = {m: c for m, c in a._terms.items() if m}
        const = a._terms.get((), 0)
        if all(c % b == 0 for c in rest.values()):
            q = _DimExpr._make({m: c // b for m, c in rest.items()}, scope)
            return q + const // b, const % b
        if b == 1:
            return a, 0
    elif isinstance(a, _DimExpr):
        q = _exact_quotient(a, b)
        if q is not None:
            return q, 0
    q = _DimExpr._atom(_Atom("floordiv", (a, b)), scope)
    return q, _DimExpr._atom(_Atom("mod", (a, b)), scope)


def _exact_quotient(a: _DimExpr, b: _DimExpr):
    """a / b when b is one monomial dividing every monomial of a; else None."""
    if len(b._terms) != 1 or () in b._terms:
        return None
    (bmono, bc), = b._terms.items()
    bpowers = dict(bmono)
    out = {}
    for mono, c in a._terms.items():
        powers = dict(mono)
        if c % bc or any(powers.get(atom, 0) < p for atom, p in bpowers.items()):
            return None
        for atom, p in bpowers.items():
            powers[atom] -= p
        key = tuple(sorted(((at, p) for at, p in powers.items() if p),
                           key=lambda ap: ap[0].sort_key()))
        out[key] = c // bc
    return _DimExpr._make(out, a._scope)


def max_dim(d1, d2):
    """The larger of two dimensions: decided when the bounds allow, else max(d1, d2).
    JAX: jax.core.max_dim."""
    return _extremum("max", d1, d2)


def min_dim(d1, d2):
    """The smaller of two dimensions. JAX: jax.core.min_dim."""
    return _extremum("min", d1, d2)


def _extremum(op, a, b):
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b) if op == "max" else min(a, b)
    scope = (a if isinstance(a, _DimExpr) else b)._scope
    diff = a - b
    if isinstance(diff, int):
        ge = diff >= 0
    else:  # a >= b, or b >= a (equality allowed both ways: either is the answer)
        ge = _known_ge0(diff, scope)
        if ge is None and _known_ge0(-diff, scope):
            ge = False
    if ge is not None:
        return (a if ge else b) if op == "max" else (b if ge else a)
    return _DimExpr._atom(_Atom(op, (a, b)), scope)


def is_symbolic_dim(p) -> bool:
    """Whether p is a symbolic dimension expression. JAX: jax.export.is_symbolic_dim."""
    return isinstance(p, _DimExpr)


# ---- parsing ------------------------------------------------------------------------------
_TOKEN = re.compile(r"\s*(?:(\d+\.\d*|\d+)|([A-Za-z_][A-Za-z0-9_]*)|(\.\.\.)|(.))")
def _spelled(op):
    # floordiv(...) and mod(...) written in a spec stay as written (JAX's parser does not
    # simplify them; the // and % operators do)
    def make(a, b):
        if isinstance(a, int) and isinstance(b, int):
            return divmod(a, b)[op == "mod"]
        scope = (a if isinstance(a, _DimExpr) else b)._scope
        return _DimExpr._atom(_Atom(op, (a, b)), scope)
    return make


_FUNCTIONS = {"max": max_dim, "min": min_dim, "mod": _spelled("mod"),
              "floordiv": _spelled("floordiv")}


class _RankError(ValueError, IndexError):
    """A spec longer than its `like` shape (JAX's parser fails indexing `like`: an
    IndexError; a ValueError is what a bad spec raises otherwise)."""


class _Parser:
    """shape := dim ("," dim)*; dim := "_" | "..." | expr; expr := ["-"] term (("+" |
    "-") term)*; term := factor ("*" factor)*; factor := INT | NAME ["^" INT] |
    FUNC "(" expr "," expr ")", FUNC one of max, min, mod, floordiv."""

    def __init__(self, text: str, scope: SymbolicScope, what: str):
        self.text, self.scope, self.what = text, scope, what
        self.tokens = [(m.start(), m.group(1) or m.group(2) or m.group(3) or m.group(4))
                       for m in _TOKEN.finditer(text) if m.group(0).strip()]
        self.i = 0
        self.dim = 0

    def error(self, msg):
        pos = self.tokens[self.i][0] if self.i < len(self.tokens) else len(self.text)
        return ValueError(f"syntax error in {self.what} {self.text!r} in dimension "
                          f"{self.dim}: {msg}. Parsed {self.text[:pos]!r}, remaining "
                          f"{self.text[pos:]!r}.")

    def peek(self):
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def take(self, expected=None):
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise self.error(f"expected {expected or 'more'}, found "
                             f"{'the end' if tok is None else repr(tok)}")
        self.i += 1
        return tok

    def shape(self, like):
        if self.peek() == "(" and self.tokens[-1][1] == ")" and self._wraps_all():
            self.tokens = self.tokens[1:-1]
        dims: list = []
        while self.peek() is not None:
            self.dim = len(dims)
            if self.peek() == "...":
                self.take()
                if like is None:
                    raise self.error("spec contains ... but no 'like' shape was given")
                if self.peek() == ",":
                    self.take()
                if self.peek() is not None:
                    raise self.error("... must be the last dimension")
                dims.extend(like[len(dims):])
                break
            elif self.peek() == "_" and self._dim_ends(self.i + 1):
                self.take()
                if like is None or len(dims) >= len(like) or like[len(dims)] is None:
                    raise self.error("a dimension variable is required for '_' without "
                                     "a known 'like' dimension")
                dims.append(like[len(dims)])
            else:
                dims.append(self.expr())
            if self.peek() is not None:
                self.take(",")
        if like is not None:
            if len(dims) > len(like):
                self.dim = len(like)
                raise _RankError(str(self.error(f"more dimensions than like={like} has")))
            for k, (d, known) in enumerate(zip(dims, like)):
                if isinstance(d, int) and known is not None and d != known:
                    self.dim = k
                    raise self.error(f"different size {d} for known dimension; like={like}")
        return tuple(dims)

    def _wraps_all(self) -> bool:
        depth = 0
        for k, (_, tok) in enumerate(self.tokens):
            depth += tok == "("
            depth -= tok == ")"
            if depth == 0 and k < len(self.tokens) - 1:
                return False
        return True

    def _dim_ends(self, k) -> bool:
        return k >= len(self.tokens) or self.tokens[k][1] == ","

    def expr(self):
        negate = self.peek() == "-"
        if negate:
            self.take()
        out = self.term()
        out = -out if negate else out
        while self.peek() in ("+", "-"):
            op = self.take()
            t = self.term()
            out = out + t if op == "+" else out - t
        return out

    def term(self):
        out = self.factor()
        while self.peek() == "*":
            self.take()
            out = out * self.factor()
        return out

    def factor(self):
        tok = self.peek()
        if tok is None:
            raise self.error("expected a dimension, found the end")
        if tok[0].isdigit():
            self.take()
            if not tok.isdigit():
                raise self.error(f"expecting integer, found {tok}")
            return int(tok)
        if tok[0].isalpha() or tok[0] == "_":
            self.take()
            if self.peek() == "(":
                if tok not in _FUNCTIONS:
                    raise self.error(f"unknown function {tok!r} (max, min, mod and "
                                     "floordiv are)")
                self.take("(")
                a = self.expr()
                self.take(",")
                b = self.expr()
                self.take(")")
                return _FUNCTIONS[tok](a, b)
            var = _DimExpr._atom(_Atom("var", (tok,)), self.scope)
            if self.peek() == "^":
                self.take()
                power = self.take()
                if not power.isdigit():
                    raise self.error(f"expecting an integer power, found {power!r}")
                return var ** int(power)
            return var
        raise self.error(f"unexpected {tok!r}")


def _parse_expr(text: str, scope: SymbolicScope, what: str):
    p = _Parser(text, scope, f"constraint {what!r}:")
    e = p.expr()
    if p.peek() is not None:
        raise p.error(f"unexpected {p.peek()!r}")
    return e


def symbolic_shape(shape_spec: str | None, *, constraints: Sequence[str] = (),
                   scope: SymbolicScope | None = None, like=None) -> tuple:
    """The dimensions a spec such as "b, 2*b, 4" names (ints and dimension expressions).
    `like`: a shape for "_" (that dimension as it is) and "..." (the rest) to copy.
    JAX: jax.export.symbolic_shape."""
    if scope is not None and constraints:
        raise ValueError("Cannot use both a scope and explicit constraints")
    if scope is None:
        # (a scope per call, as in JAX: dimensions of two calls do not mix)
        scope = SymbolicScope(constraints)
    if shape_spec is None:
        if like is None:
            raise ValueError("symbolic_shape: a spec of None needs a 'like' shape")
        return tuple(like)
    if not isinstance(shape_spec, str):
        raise ValueError(f"polymorphic shape spec should be a string, got {shape_spec!r}")
    like = None if like is None else tuple(like)
    return _Parser(shape_spec, scope, "symbolic shape").shape(like)


__all__ = ["SymbolicScope", "InconclusiveDimensionOperation", "is_symbolic_dim",
           "max_dim", "min_dim", "symbolic_shape"]
