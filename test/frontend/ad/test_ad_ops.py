"""check_grads (mjax.test_util) on every differentiable op through the user API
(mjax.numpy / mjax.lax), forward and reverse mode, to second order.

All cases with rules are checked by ONE check_grads call on a function returning every
case's output (a few compiles in total); if it fails, each case is re-checked alone so
the failure names the op. Ops whose rules are missing are strict xfails that flip once
the rule lands.
"""
from __future__ import annotations

import numpy as np
import pytest

import mjax
import mjax.lax as lax
import mjax.numpy as jnp
from mjax.test_util import check_grads

from frontend_util import x64

RNG = np.random.default_rng(42)


def u(*shape, lo=0.2, hi=0.9):
    return RNG.uniform(lo, hi, shape)


def spread(*shape, lo=-2.0, hi=2.0):
    """Distinct values away from 0 and from each other (max/min/abs/sort are smooth)."""
    n = int(np.prod(shape))
    vals = np.linspace(lo, hi, n + 2)[1:-1] + 0.05
    return RNG.permutation(vals).reshape(shape)


def cu(*shape):
    return u(*shape) + 1j * u(*shape)


UNARY = ["negative", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt",
         "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
         "arctanh", "square", "reciprocal"]


def cases():
    c = [(f"jnp.{n}", getattr(jnp, n), (u(3),)) for n in UNARY]
    c += [
        ("jnp.arccosh", jnp.arccosh, (u(3, lo=1.2, hi=2.0),)),
        ("lax.rsqrt", lax.rsqrt, (u(3),)),
        ("lax.logistic", lax.logistic, (spread(3),)),
        ("lax.erf", lax.erf, (spread(3, lo=-1, hi=1),)),
        ("lax.erfc", lax.erfc, (spread(3, lo=-1, hi=1),)),
        ("lax.erf_inv", lax.erf_inv, (spread(3, lo=-0.5, hi=0.5),)),
        ("jnp.abs", jnp.abs, (spread(4),)),
        ("jnp.sign*x", lambda x: jnp.sign(x) * x, (spread(4),)),
        ("jnp.add", jnp.add, (u(3), u(3))),
        ("jnp.subtract", jnp.subtract, (u(3), u(3))),
        ("jnp.multiply", jnp.multiply, (u(3), u(3))),
        ("jnp.divide", jnp.divide, (u(3), u(3))),
        ("jnp.power", jnp.power, (u(3), u(3))),
        ("x**3", lambda x: x ** 3, (spread(3),)),
        ("x**-2", lambda x: x ** -2, (u(3),)),
        ("jnp.maximum", jnp.maximum, (spread(4), spread(4))),
        ("jnp.minimum", jnp.minimum, (spread(4), spread(4))),
        ("jnp.arctan2", jnp.arctan2, (u(3), u(3))),
        ("jnp.hypot", jnp.hypot, (u(3), u(3))),
        ("jnp.logaddexp", jnp.logaddexp, (spread(3), spread(3))),
        ("lax.rem", lax.rem, (u(3, lo=2.1, hi=2.9), u(3, lo=0.7, hi=0.9))),
        ("lax.clamp", lambda x: lax.clamp(-1.0, x, 1.0), (spread(6),)),
        ("jnp.clip", lambda x: jnp.clip(x, -1.0, 1.0), (spread(6),)),
        ("jnp.where", lambda x, y: jnp.where(x > 0, x, y), (spread(4), spread(4))),
        ("broadcasting", lambda x, y: x * y + x, (u(2, 1), u(3))),
        # complex
        ("jnp.real", jnp.real, (cu(3),)),
        ("jnp.imag", jnp.imag, (cu(3),)),
        ("jnp.conj", jnp.conj, (cu(3),)),
        ("lax.complex", lax.complex, (u(3), u(3))),
        ("jnp.abs(complex)", jnp.abs, (cu(3),)),
        ("jnp.exp(complex)", jnp.exp, (cu(3),)),
        ("jnp.multiply(complex)", jnp.multiply, (cu(3), cu(3))),
        ("jnp.divide(complex)", jnp.divide, (cu(3), cu(3))),
        # structural
        ("jnp.reshape", lambda x: jnp.reshape(x, (3, 2)), (u(2, 3),)),
        ("jnp.transpose", lambda x: jnp.transpose(x, (2, 0, 1)), (u(2, 3, 4),)),
        ("x.T", lambda x: x.T, (u(2, 3),)),
        ("jnp.broadcast_to", lambda x: jnp.broadcast_to(x, (4, 3)), (u(3),)),
        ("jnp.squeeze", lambda x: jnp.squeeze(x, 1), (u(3, 1),)),
        ("jnp.expand_dims", lambda x: jnp.expand_dims(x, 0), (u(3),)),
        ("jnp.concatenate", lambda x, y: jnp.concatenate([x, y], 1), (u(2, 3), u(2, 2))),
        ("jnp.stack", lambda x, y: jnp.stack([x, y]), (u(3), u(3))),
        ("jnp.flip", lambda x: jnp.flip(x, 0), (u(4),)),
        ("basic slicing", lambda x: x[1:, ::2] * 2, (u(3, 5),)),
        ("int index", lambda x: x[1], (u(3, 2),)),
        ("lax.pad", lambda x: lax.pad(x, 0.5, ((1, 2, 1),)), (u(3),)),
        ("jnp.tile", lambda x: jnp.tile(x, 2), (u(3),)),
        ("lax.tile", lambda x: lax.tile(x, (2, 1, 3)), (u(2, 3, 1),)),
        ("jnp.roll", lambda x: jnp.roll(x, 1), (u(4),)),
        ("jnp.triu", jnp.triu, (u(3, 3),)),
        ("lax.dynamic_slice", lambda x: lax.dynamic_slice(x, (1,), (2,)), (u(4),)),
        ("lax.dynamic_update_slice", lambda x, y: lax.dynamic_update_slice(x, y, (1,)),
         (u(4), u(2))),
        ("convert to complex", lambda x: lax.convert_element_type(x, np.complex128) * 1j,
         (u(3),)),
        ("jnp.dot", jnp.dot, (u(2, 3), u(3, 4))),
        ("jnp.matmul batched", jnp.matmul, (u(2, 2, 3), u(2, 3, 2))),
        ("jnp.einsum", lambda a, b: jnp.einsum("ij,jk->ik", a, b), (u(2, 3), u(3, 2))),
        ("jnp.outer", jnp.outer, (u(2), u(3))),
        ("jnp.trace", jnp.trace, (u(3, 3),)),
        # reductions
        ("jnp.sum", lambda x: jnp.sum(x, 0), (u(2, 3),)),
        ("jnp.mean", jnp.mean, (u(2, 3),)),
        ("jnp.max", lambda x: jnp.max(x, 1), (spread(2, 3),)),
        ("jnp.min", jnp.min, (spread(2, 3),)),
        ("jnp.var", jnp.var, (u(5),)),
        ("jnp.std", jnp.std, (u(5),)),
        ("jnp.cumsum", lambda x: jnp.cumsum(x, 1), (u(2, 3),)),
        ("jnp.linalg-free norm", lambda x: jnp.sqrt(jnp.sum(x * x)), (u(4),)),
        ("jnp.cumprod", jnp.cumprod, (u(4),)),
        ("lax.cummax", lax.cummax, (spread(4),)),
        ("lax.cummin", lax.cummin, (spread(4),)),
        ("lax.cumlogsumexp", lax.cumlogsumexp, (u(4),)),
        ("jnp.prod", jnp.prod, (u(4),)),
        ("jnp.sort", jnp.sort, (spread(5),)),
        ("gather x[idx]", lambda x: x[np.array([2, 0, 2])], (u(4),)),
        ("jnp.take", lambda x: jnp.take(x, np.array([1, 3]), axis=0), (u(4, 2),)),
        # special functions (appended last: earlier cases keep their random inputs)
        ("lax.lgamma", lax.lgamma, (u(3, lo=1.5, hi=3.0),)),
        ("lax.digamma", lax.digamma, (u(3, lo=1.5, hi=3.0),)),
        ("lax.polygamma(2., x)", lambda x: lax.polygamma(2.0, x), (u(3, lo=1.5, hi=3.0),)),
        ("lax.optimization_barrier",
         lambda x, y: (lambda a, b: a * b)(*lax.optimization_barrier((x, y))), (u(3), u(3))),
    ]
    return c


CASES = cases()
IDS = [name for name, _, _ in CASES]
assert len(set(IDS)) == len(IDS)


GROUPS = 3  # separate tests, so pytest-xdist can spread the compile work


def _all_at_once(group):
    flat = tuple(a for _, _, args in group for a in args)

    def f(*xs):
        outs, pos = [], 0
        for (_, fn, args) in group:
            outs.append(fn(*xs[pos:pos + len(args)]))
            pos += len(args)
        return tuple(outs)
    return f, flat


@pytest.mark.parametrize("part", range(GROUPS))
def test_check_grads_every_op_order2_batched(part):
    group = CASES[part::GROUPS]
    with x64():
        f, args = _all_at_once(group)
        try:
            check_grads(mjax.jit(f), args, order=2, modes=("fwd", "rev"))
        except AssertionError:
            failed = []
            for name, fn, a in group:
                try:
                    check_grads(fn, a, order=2)
                except AssertionError as e:
                    failed.append(f"{name}: {e}")
            assert failed, "the batched check failed but every op passes alone"
            raise AssertionError("check_grads failed for:\n" + "\n\n".join(failed))


@pytest.mark.parametrize("name", ["jnp.sin", "jnp.multiply", "jnp.max", "jnp.concatenate"])
def test_check_grads_eager_order2(name):
    """The same checks on plain (non-jit) functions: eager jvp/vjp of eager ops."""
    fn, args = {n: (f, a) for n, f, a in CASES}[name]
    with x64():
        check_grads(fn, args, order=2)


# ---- scatter through x.at[]: check_grads calls f on host NumPy arrays (primal and
# finite differences), which have no `.at`, so the case converts with jnp.asarray first.
_AT_IDX = np.array([0, 2])
SCATTER = [
    ("scatter .at[].set", lambda x, y: jnp.asarray(x).at[_AT_IDX].set(y), (u(4), u(2))),
    ("scatter_add .at[].add", lambda x, y: jnp.asarray(x).at[_AT_IDX].add(y), (u(4), u(2))),
    ("scatter_max .at[].max", lambda x, y: jnp.asarray(x).at[_AT_IDX].max(y),
     (spread(4), spread(2))),
    # Second order needs symbolic zero tangents through calls: the constant updates must
    # not get a (zero) tangent, which scatter_mul's JVP rule would refuse.
    ("scatter_mul .at[].multiply, d/dx only",
     lambda x: jnp.asarray(x).at[_AT_IDX].multiply(np.array([2.0, -3.0])), (u(4),)),
]


@pytest.mark.parametrize("name,fn,args", SCATTER,
                         ids=[c.values[0] if hasattr(c, "values") else c[0]
                              for c in SCATTER])
def test_check_grads_scatter_at(name, fn, args):
    with x64():
        check_grads(fn, args, order=2)


def test_scatter_mul_at_updates_gradient_is_an_error_as_in_jax():
    # JAX: NotImplementedError "scatter_mul gradients are only implemented if
    # `unique_indices=True`" (x.at[].multiply does not promise unique indices).
    f = lambda x, y: jnp.asarray(x).at[_AT_IDX].multiply(y)  # noqa: E731
    with x64(), pytest.raises(Exception, match=r"scatter_mul with respect to its updates "
                                               r"unless unique_indices=True"):
        mjax.grad(lambda x, y: jnp.sum(f(x, y)), argnums=1)(u(4), u(2))


def test_polygamma_gradient_wrt_m_is_an_error_as_in_jax():
    # JAX: polygamma_gradm raises "polygamma gradient with respect to m is not supported".
    with x64(), pytest.raises(Exception, match="polygamma gradient with respect to m is "
                                               "not supported"):
        mjax.grad(lambda m: lax.polygamma(m, 2.5))(1.0)
