"""vmap of every elementwise op equals a Python loop of the op stacked, for batched and
unbatched operands on different axes, eagerly and under jit."""
from __future__ import annotations

import numpy as np
import pytest

import mjax
from mjax.core import bind
from mjax.dialect.ops import elementwise as E
from mjax.passes.rules import BATCH

OPS = sorted((cls for cls in vars(E).values() if isinstance(cls, type)
              and issubclass(cls, E.JaxprOp) and cls.primitive
              and cls.__module__ == E.__name__), key=lambda c: c.primitive)

INTEGER = {"not", "and", "or", "xor", "shift_left", "shift_right_arithmetic",
           "shift_right_logical", "population_count", "clz"}
PARAMS = {"integer_pow": {"y": 3}, "round": {"rounding_method": 0}}
RNG = np.random.default_rng(0)


def operands(op):
    """Per-example-shaped (3,) operands, batched over 5 along some axis later."""
    n = 1 if op.num_operands == 1 else (op.num_operands or 2)
    name = op.primitive
    if name in INTEGER:
        return [RNG.integers(0, 7, size=(5, 3)).astype(np.int32) for _ in range(n)]
    if name == "polygamma":
        return [np.full((5, 3), 1.0, np.float32), RNG.uniform(0.5, 2.0, (5, 3)).astype(np.float32)]
    if name in ("real", "imag", "conj"):
        return [(RNG.normal(size=(5, 3)) + 1j * RNG.normal(size=(5, 3))).astype(np.complex64)]
    lo, hi = (0.1, 0.9) if name in ("acosh", "atanh", "asin", "acos", "erf_inv", "log",
                                    "log1p", "sqrt", "rsqrt", "lgamma", "digamma", "pow") else (-2, 2)
    if name == "acosh":
        lo, hi = 1.1, 3.0
    return [RNG.uniform(lo, hi, (5, 3)).astype(np.float32) for _ in range(n)]


@pytest.mark.parametrize("op", OPS, ids=lambda c: c.primitive)
def test_vmap_matches_loop(op):
    assert op in BATCH
    xs = operands(op)
    params = PARAMS.get(op.primitive, {})
    f = lambda *a: bind(op, *a, **params)  # noqa: E731
    want = np.stack([np.asarray(f(*[x[i] for x in xs])) for i in range(5)])
    # every operand batched on axis 0; then the first on axis 1 and the others unbatched
    got = mjax.vmap(f)(*xs)
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-6)
    if len(xs) > 1:
        g = mjax.jit(mjax.vmap(f, in_axes=(1,) + (None,) * (len(xs) - 1)))
        got = g(xs[0].T, *[x[0] for x in xs[1:]])
        want = np.stack([np.asarray(f(xs[0][i], *[x[0] for x in xs[1:]])) for i in range(5)])
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-6)
    else:
        got = mjax.jit(mjax.vmap(f, in_axes=1, out_axes=1))(xs[0].T)
        np.testing.assert_allclose(np.asarray(got), want.T, rtol=2e-6, atol=1e-6)
