"""Symbolic dimensions (shape polymorphism) as `jax.export` spells them.

`symbolic_shape("b, 2*b + 1")` gives dimension expressions: integer polynomials over
dimension variables (each >= 1) and the operations `floordiv`, `mod`, `max` and `min`
of expressions, kept in a normal form (a sum of monomials with integer coefficients), so
equal expressions compare equal. Comparisons are decided from bounds: each variable's
range (from 1 up, narrowed by a `SymbolicScope`'s constraints such as "b >= 4"), interval
arithmetic over the monomials, and the scope's constraints between expressions ("c <=
a"); a comparison the bounds do not settle raises `InconclusiveDimensionOperation`, as
JAX's does. Equality is structural: `b == 4` is False.

It lives in the dialect because avals carry these expressions as dimensions, and the
IR spells them in a tensor type's encoding (`tensor<?x4xf32, "b, 4">`, dialect/types.py).
"""
from __future__ import annotations

import math
import operator
import re
import traceback
from typing import Sequence

import numpy as np

from mjax.dialect.shape_poly_decision import (  # noqa: F401  (UnexpectedDimVar: re-exported)
    InconclusiveDimensionOperation, UnexpectedDimVar, _decide_ge, _implied_facts, _known_ge0,
    _known_zero)


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
        # Equality constraints with one term on the left (`a * b == c + d`) rewrite every
        # expression: (monomial, coefficient, the right side), as JAX's do.
        self._rules: list[tuple[tuple, int, _DimExpr | int]] = []
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
        if kind == "==" and isinstance(lhs, _DimExpr) and len(lhs._terms) == 1:
            ((mono, coeff),) = lhs._terms.items()
            if mono:
                self._rules.append((mono, coeff, rhs))
                # What the left side's operations imply holds of the right side now.
                self._facts.extend(
                    (f, k) for f, k in _implied_facts(lhs) if not isinstance(f, int))
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


    # ---- the printing order: by a syntactic size, then names (JAX prints the same way,
    # so the same expression reads the same in both) ----
    def size(self) -> int:
        return 1 if self.op == "var" else 1 + sum(_size(a) for a in self.args)

    def sort_key(self):
        if self.op == "var":
            return (1, self.args[0])
        return (self.size(), "", self.op, tuple(_expr_key(a) for a in self.args))


def fold(x, var, const, add, mul, binary):
    """A dimension (expression) computed with the given operations: `var(name)`,
    `const(int)`, `add(a, b)`, `mul(a, b)` and `binary(op, a, b)` for op in floordiv,
    mod, max, min. Lowering builds StableHLO this way; `_evaluate` builds ints."""
    if isinstance(x, int):
        return const(x)

    def atom(a: _Atom):
        if a.op == "var":
            return var(a.args[0])
        return binary(a.op, *(fold(y, var, const, add, mul, binary) for y in a.args))

    total = None
    for mono, c in _sorted_terms(x):
        term = None if c == 1 and mono else const(c)
        for a, p in mono:
            for _ in range(p):
                v = atom(a)
                term = v if term is None else mul(term, v)
        total = term if total is None else add(total, term)
    return total


_INT_OPS = {"max": max, "min": min, "mod": lambda p, q: p % q,
            "floordiv": lambda p, q: p // q}


def _evaluate(x, env: dict) -> int:
    """The value of a dimension (expression) for the variables' values in env."""
    return fold(x, env.__getitem__, int, lambda a, b: a + b, lambda a, b: a * b,
                lambda op, a, b: _INT_OPS[op](a, b))


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
        if scope._rules and terms:
            terms = _rewrite(terms, scope)
        if not terms:
            return 0
        if list(terms) == [()]:
            return terms[()]
        return _DimExpr(terms, scope)

    @staticmethod
    def _atom(atom: _Atom, scope: SymbolicScope) -> _DimExpr:
        if scope._rules:          # (an equality constraint may rewrite it)
            return _DimExpr._make({((atom, 1),): 1}, scope)
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
            return None
        return {(): int(other)}

    def _as_value(self, other, op, reflected: bool):
        """`op` on the dimension's array value, for a float, complex or NumPy operand
        (JAX's rule: a dimension meeting a non-integer becomes a value); NotImplemented
        for the rest (an array's own reflected operator takes it)."""
        if not isinstance(other, (float, complex, np.ndarray, np.generic)):
            return NotImplemented
        value = self.__jax_array__()
        return op(other, value) if reflected else op(value, other)

    @property
    def scope(self) -> SymbolicScope:
        return self._scope

    def __add__(self, other):
        t = self._other(other)
        if t is None:
            return self._as_value(other, operator.add, False)
        out = dict(self._terms)
        for m, c in t.items():
            out[m] = out.get(m, 0) + c
        return _DimExpr._make(out, self._scope)

    def __radd__(self, other):
        t = self._other(other)
        return self + other if t is not None else self._as_value(other, operator.add, True)

    def __neg__(self):
        return _DimExpr._make({m: -c for m, c in self._terms.items()}, self._scope)

    def __sub__(self, other):
        t = self._other(other)
        if t is None:
            return self._as_value(other, operator.sub, False)
        return self + _DimExpr._make({m: -c for m, c in t.items()}, self._scope)

    def __rsub__(self, other):
        if self._other(other) is None:
            return self._as_value(other, operator.sub, True)
        return (-self) + other

    def __mul__(self, other):
        t = self._other(other)
        if t is None:
            return self._as_value(other, operator.mul, False)
        out: dict = {}
        for m1, c1 in self._terms.items():
            for m2, c2 in t.items():
                m = _mono_mul(m1, m2)
                out[m] = out.get(m, 0) + c1 * c2
        return _DimExpr._make(out, self._scope)

    def __rmul__(self, other):
        t = self._other(other)
        return self * other if t is not None else self._as_value(other, operator.mul, True)

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
        # (true division makes an array value, as in JAX; // and % stay dimensions)
        return self.__jax_array__() / other

    def __rtruediv__(self, other):
        return other / self.__jax_array__()

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
        # (the frontend fills AS_VALUE: it stages `jaxpr.dim_as_value`)
        if not AS_VALUE:
            raise InconclusiveDimensionOperation(
                f"Symbolic dimension '{self}' used as an array value")
        return AS_VALUE[0](self)


# The function that makes a dimension an array value under a trace (registered by the
# frontend's lax: JAX's core.dimension_as_value).
AS_VALUE: list = []


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _rewrite(terms: dict, scope) -> dict:
    """terms with every monomial that a scope's equality rule's left side divides
    replaced by the rule's right side (times the rest)."""
    for _ in range(16):      # (rules rewrite to smaller expressions; a cycle stops here)
        for mono, c in terms.items():
            for lhs, k, rhs in scope._rules:
                rest = _mono_div(mono, lhs)
                if rest is not None and c % k == 0:
                    out = dict(terms)
                    del out[mono]
                    add = (c // k) * rhs * (_DimExpr({rest: 1}, scope) if rest else 1)
                    for m2, c2 in ({(): add} if isinstance(add, int) else add._terms).items():
                        out[m2] = out.get(m2, 0) + c2
                    terms = {m: v for m, v in out.items() if v != 0}
                    break
            else:
                continue
            break
        else:
            return terms
    return terms


def _mono_div(m, d):
    """m / d for monomials, None when d does not divide m."""
    powers = dict(m)
    for atom, p in d:
        if powers.get(atom, 0) < p:
            return None
        powers[atom] -= p
    return tuple((a, powers[a]) for a, _ in m if powers[a] > 0)


def _mono_mul(m1, m2):
    powers: dict = {}
    for atom, p in m1 + m2:
        powers[atom] = powers.get(atom, 0) + p
    return tuple(sorted(powers.items(), key=lambda ap: ap[0].sort_key()))


# ---- floordiv, mod, max, min -------------------------------------------------------------------
def _divmod(a, b, scope):
    # (NumPy integers, as sizes computed with np.prod are, count as ints)
    a, b = (int(v) if isinstance(v, np.integer) else v for v in (a, b))
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


def as_dim(d):
    """A dimension as shapes hold it: a dimension expression as it is, else an int
    (`int(d)`: TypeError for what is not an integer)."""
    if isinstance(d, _DimExpr):
        return d
    if isinstance(d, (str, bytes)):     # (int("7") would take it: JAX's TypeError)
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {d!r} as a dimension.")
    return int(d)


# ---- dimensions in IR text -------------------------------------------------------------
# The IR spells a dimension expression as text (a tensor type's encoding, a string in a
# shape attribute). Text read back means the expressions of the latest scope that wrote
# any (a trace and the passes over its IR run one after the other), or, for IR first met
# as text, one scope with no constraints.
_TEXT_SCOPE: list = []


def spelled_dims(shape) -> str:
    """The text of a shape with symbolic dimensions ("b, 2*b + 1, 4"), remembering their
    scope for `dims_of_text`."""
    for d in shape:
        if isinstance(d, _DimExpr):
            if not _TEXT_SCOPE or _TEXT_SCOPE[0] is not d._scope:
                _TEXT_SCOPE[:] = [d._scope]
            break
    return ", ".join(map(str, shape))


def dims_of_text(text: str, scope: SymbolicScope | None = None) -> tuple:
    """The dimensions `spelled_dims` wrote (ValueError for bad text), in `scope` if given,
    else in the latest scope spelled."""
    if scope is None:
        if not _TEXT_SCOPE:
            _TEXT_SCOPE.append(SymbolicScope())
        scope = _TEXT_SCOPE[0]
    return symbolic_shape(text, scope=scope)


def broadcast_shapes(*shapes) -> tuple:
    """NumPy's broadcast of shapes that may hold dimension expressions: dimensions are
    equal, or one of them is 1. ValueError when they do not broadcast."""
    rank = max(map(len, shapes), default=0)
    out = []
    for dims in zip(*[(1,) * (rank - len(s)) + tuple(s) for s in shapes]):
        result = 1
        for d in dims:
            if _is_int(d) and d == 1 or d == result:
                continue
            if _is_int(result) and result == 1:
                result = d
            else:
                raise ValueError(f"Incompatible shapes for broadcasting: "
                                 f"{', '.join(str(tuple(s)) for s in shapes)}")
        out.append(result)
    return tuple(out)


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
