"""mjax.experimental.hijax.VJPHiPrimitive: user-defined primitives, checked against JAX's
(jax.experimental.hijax, installed as a test-only oracle) and against closed forms."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import hijax as jhijax

import mjax
import mjax.numpy as mjnp
from mjax.experimental import hijax as mhijax

LIBS = {"jax": (jax, jjnp, jhijax), "mjax": (mjax, mjnp, mhijax)}


def _prims(lib):
    """The primitives the tests use, defined over `lib` (jax or mjax) alike."""
    api, jnp, hijax = LIBS[lib]

    class SinTimesY(hijax.VJPHiPrimitive):
        def __init__(self, x_aval, y_aval):
            self.in_avals, self.out_aval, self.params = (x_aval, y_aval), x_aval, {}
            super().__init__()

        def expand(self, x, y):
            return jnp.sin(x) * y

        def vjp_fwd(self, nzs_in, x, y):
            return self(x, y), (jnp.cos(x), jnp.sin(x), y)

        def vjp_bwd_retval(self, res, g):
            cos_x, sin_x, y = res
            return (cos_x * g * y, sin_x * g)

        def batch_dim_rule(self, axis_data, in_dims):
            x_dim, y_dim = in_dims
            return y_dim if x_dim is None else x_dim

    class Both(SinTimesY):
        """Both rules; the jvp deliberately scaled by 10 so the test sees which runs."""
        def jvp(self, primals, tangents):
            (x, y), (x_dot, y_dot) = primals, tangents
            return self(x, y), 10. * (jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot)

    class Clip(hijax.VJPHiPrimitive):
        """Identity whose cotangent is clipped: grad differs from the expand's."""
        def __init__(self, lo_aval, hi_aval, x_aval):
            self.in_avals, self.out_aval, self.params = (lo_aval, hi_aval, x_aval), x_aval, {}
            super().__init__()

        def expand(self, lo, hi, x):
            return x

        def vjp_fwd(self, nzs_in, lo, hi, x):
            return self(lo, hi, x), (lo, hi)

        def vjp_bwd_retval(self, res, g):
            lo, hi = res
            return (None, None, jnp.clip(g, lo, hi))

        def batch_dim_rule(self, axis_data, in_dims):
            return in_dims[2]

    class Sin(hijax.VJPHiPrimitive):
        """Only a jvp rule, deliberately scaled by 3 so the test sees it is used."""
        def __init__(self, x_aval):
            self.in_avals, self.out_aval, self.params = (x_aval,), x_aval, {}
            super().__init__()

        def expand(self, x):
            return jnp.sin(x)

        def jvp(self, primals, tangents):
            (x,), (t,) = primals, tangents
            return self(x), 3. * jnp.cos(x) * t

    class LinSin(hijax.VJPHiPrimitive):
        """lin/linearized, scaled by 2 so the test sees they are used."""
        def __init__(self, x_aval):
            self.in_avals, self.out_aval, self.params = (x_aval,), x_aval, {}
            super().__init__()

        def expand(self, x):
            return jnp.sin(x)

        def lin(self, nzs_in, x):
            return self(x), 2. * jnp.cos(x)

        def linearized(self, c, t):
            return c * t

    class Scale(hijax.VJPHiPrimitive):
        """vjp_bwd with accumulators, a static parameter, and nzs_in recorded."""
        seen = []

        def __init__(self, x_aval, y_aval, *, k):
            self.in_avals, self.out_aval, self.params = (x_aval, y_aval), x_aval, dict(k=k)
            super().__init__()

        def expand(self, x, y):
            return self.k * x * y

        def vjp_fwd(self, nzs_in, x, y):
            Scale.seen.append(tuple(bool(n) for n in nzs_in))
            return self(x, y), (x, y)

        def vjp_bwd(self, res, g, x_acc, y_acc):
            x, y = res
            x_acc.accum(self.k * y * g)
            y_acc.accum(self.k * x * g)

    class MatVec(hijax.VJPHiPrimitive):
        """An own `batch` rule, deliberately scaled by 2 so the test sees it is used."""
        def __init__(self, A_aval, x_aval):
            self.in_avals = (A_aval, x_aval)
            self.out_aval = hijax.ShapedArray((A_aval.shape[0],), A_aval.dtype)
            self.params = {}
            super().__init__()

        def expand(self, A, x):
            return A @ x

        def batch(self, axis_data, args, dims):
            (A, X), (A_dim, x_dim) = args, dims
            assert A_dim is None and axis_data.size == X.shape[x_dim]
            return 2. * (jnp.moveaxis(X, x_dim, 0) @ A.T), 0

    class Noisy(hijax.VJPHiPrimitive):
        calls = []

        def __init__(self, x_aval):
            self.in_avals, self.out_aval, self.params = (x_aval,), x_aval, {}
            super().__init__()

        def expand(self, x):
            Noisy.calls.append(1)
            return jnp.cos(x)

    class Tree(hijax.VJPHiPrimitive):
        """Pytree input and output."""
        def __init__(self, pt_aval):
            self.in_avals = (pt_aval,)
            self.out_aval = {'a': pt_aval[0], 'b': (pt_aval[0], pt_aval[1])}
            self.params = {}
            super().__init__()

        def expand(self, pt):
            return {'a': pt[0] ** 2, 'b': (jnp.sin(pt[0]), jnp.cos(pt[1]))}

        def vjp_fwd(self, nzs_in, pt):
            return self(pt), pt

        def vjp_bwd_retval(self, pt, g):
            g = api.tree.map(hijax.instantiate_zeros, g,
                             is_leaf=lambda x: isinstance(x, hijax.Zero))
            return ((2 * pt[0] * g['a'] + jnp.cos(pt[0]) * g['b'][0],
                     -jnp.sin(pt[1]) * g['b'][1]),)

    def call(cls, *args, **kw):
        return cls(*[api.tree.map(api.typeof, a) for a in args], **kw)(*args)
    return api, jnp, dict(SinTimesY=SinTimesY, Both=Both, Clip=Clip, Sin=Sin, LinSin=LinSin, Scale=Scale,
                          Noisy=Noisy, MatVec=MatVec, Tree=Tree), call


def _both(run):
    out = {lib: run(*_prims(lib)) for lib in LIBS}
    for a, b in zip(jax.tree.leaves(out["jax"]), jax.tree.leaves(out["mjax"])):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6, atol=1e-6)
    return out["mjax"]


def test_eval_jit_grad_match_jax():
    def run(api, jnp, P, call):
        f = lambda x, y: call(P["SinTimesY"], x, y)
        return (f(2., 3.), api.jit(f)(2., 3.), api.grad(f)(2., 3.),
                api.grad(f, 1)(2., 3.), api.jit(api.grad(f))(jnp.float32(0.5), 1.5))
    out = _both(run)
    np.testing.assert_allclose(out[2], np.cos(2.) * 3., rtol=1e-6)


def test_bwd_rule_is_used_not_expand():
    def run(api, jnp, P, call):
        f = lambda x: jnp.sin(call(P["Clip"], -0.5, 0.5, x))
        t = jnp.linspace(0., 3., 7)
        return api.vmap(api.grad(f))(t)
    out = _both(run)
    t = np.linspace(0., 3., 7)
    np.testing.assert_allclose(out, np.clip(np.cos(t), -0.5, 0.5), rtol=1e-6)


def test_jvp_rule_is_used():
    def run(api, jnp, P, call):
        f = lambda x: call(P["Sin"], x)
        return api.jvp(f, (1.,), (1.,))
    y, t = _both(run)
    np.testing.assert_allclose(t, 3 * np.cos(1.), rtol=1e-6)


def test_jvp_and_vjp_rules_each_in_their_mode():
    def run(api, jnp, P, call):
        f = lambda x, y: call(P["Both"], x, y)
        y, t = api.jvp(f, (2., 3.), (1., 0.))
        jit_t = api.jit(lambda x: api.jvp(f, (x, 3.), (1., 0.))[1])(2.)
        return (y, t, jit_t, api.grad(f)(2., 3.),
                api.grad(lambda x: api.jvp(f, (x, 3.), (1., 0.))[1])(2.),
                api.vmap(lambda x: api.jvp(f, (x, 3.), (1., 0.)))(jnp.arange(3.)))
    y, t, jit_t, g, gt, _ = _both(run)
    np.testing.assert_allclose([t, jit_t, g, gt],
                               [30 * np.cos(2.), 30 * np.cos(2.), 3 * np.cos(2.),
                                -30 * np.sin(2.)], rtol=1e-5)


def test_lin_rule_is_used():
    def run(api, jnp, P, call):
        y, f_lin = api.linearize(lambda x: call(P["LinSin"], x), 1.)
        return y, f_lin(2.)
    y, t = _both(run)
    np.testing.assert_allclose(t, 4 * np.cos(1.), rtol=1e-6)


def test_grad_of_jvp_only_primitive_transposes_its_jvp():
    # (JAX 0.10.2 raises NotImplementedError asking for vjp_fwd; mjax transposes the
    # linear jvp rule, as JAX's later `vjp_from_lin` does.)
    api, jnp, P, call = _prims("mjax")
    f = lambda x: call(P["Sin"], x)
    np.testing.assert_allclose(api.grad(f)(1.), 3 * np.cos(1.), rtol=1e-6)
    np.testing.assert_allclose(api.grad(api.grad(f))(1.), -3 * np.sin(1.), rtol=1e-6)


def test_vjp_bwd_accumulators_and_nzs_in():
    def run(api, jnp, P, call):
        f = lambda x, y: call(P["Scale"], x, y, k=2.)
        P["Scale"].seen.clear()
        g0 = api.grad(f, 0)(3., 5.)
        g01 = api.grad(f, (0, 1))(3., 5.)
        assert P["Scale"].seen[0] == (True, False)
        assert P["Scale"].seen[-1] == (True, True)
        return g0, g01, api.grad(api.grad(f))(3., 5.)
    g0, g01, gg = _both(run)
    np.testing.assert_allclose([g0, *g01], [10., 10., 6.])


def test_higher_order_and_vmap():
    def run(api, jnp, P, call):
        f = lambda x, y: call(P["SinTimesY"], x, y)
        xs = jnp.arange(3.)
        return (api.grad(api.grad(f))(1., 2.), api.vmap(f)(xs, xs + 1.),
                api.vmap(api.grad(f))(xs, xs + 1.), api.vmap(f, in_axes=(0, None))(xs, 2.))
    _both(run)


def test_pytree_primitive():
    def run(api, jnp, P, call):
        f = lambda pt: call(P["Tree"], pt)
        fun = lambda pt: f(pt)['a'] + f(pt)['b'][0]
        return f((1., 2.)), api.grad(fun)((1., 2.))
    out = _both(run)
    np.testing.assert_allclose(out[1][0], 2. + np.cos(1.), rtol=1e-6)


def test_expand_traced_once_under_jit():
    api, jnp, P, call = _prims("mjax")
    P["Noisy"].calls.clear()
    f = api.jit(lambda x: call(P["Noisy"], x))
    np.testing.assert_allclose(f(1.), np.cos(1.), rtol=1e-6)
    f(1.)
    assert len(P["Noisy"].calls) == 1


def test_missing_rules_raise():
    api, jnp, P, call = _prims("mjax")
    with pytest.raises(NotImplementedError, match="jvp"):
        api.grad(lambda x: call(P["Noisy"], x))(1.)
    with pytest.raises(NotImplementedError, match="batch_dim_rule"):
        api.vmap(lambda x: call(P["Noisy"], x))(jnp.arange(3.))
    with pytest.raises(AttributeError, match="in_avals"):
        class Bad(mhijax.VJPHiPrimitive):
            def __init__(self):
                super().__init__()
        Bad()


def test_jaxpr_shows_call_hi_primitive():
    texts = {}
    for lib in LIBS:
        api, jnp, P, call = _prims(lib)
        f = lambda x, y: call(P["Scale"], x, y, k=2.)
        texts[lib] = str(api.jit(f).trace(2., 3.).jaxpr)
    assert "call_hi_primitive[_prim=Scale[{'k': 2.0}]] a b" in texts["jax"]
    assert texts["mjax"] == texts["jax"]


def test_own_batch_rule_is_used():
    def run(api, jnp, P, call):
        A = jnp.arange(6.).reshape(2, 3)
        xs = jnp.arange(12.).reshape(4, 3)
        f = lambda A, x: call(P["MatVec"], A, x)
        return (f(A, xs[0]), api.vmap(f, in_axes=(None, 0))(A, xs),
                api.vmap(f, in_axes=(None, 1), out_axes=1)(A, xs.T),
                api.jit(api.vmap(f, in_axes=(None, 0)))(A, xs))
    one, batched, t, jitted = _both(run)
    A, xs = np.arange(6.).reshape(2, 3), np.arange(12.).reshape(4, 3)
    np.testing.assert_allclose(batched, 2 * xs @ A.T)
    np.testing.assert_allclose(one, A @ xs[0])
