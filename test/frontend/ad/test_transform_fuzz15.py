"""Differential regressions (custom_vjp under checkpoint and nested differentiation, vmap's
spmd_axis_name, traced shape arguments) against real JAX: each case runs the same
program on mjax and on jax and compares values, dtypes, weak types and exception
classes and messages."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp

X3 = np.arange(1., 4.).astype(np.float32)
X = np.arange(1., 7.).reshape(2, 3).astype(np.float32)


def _both(fn):
    return fn(jax, jnp), fn(mjax, mnp)


def _same(fn, exact=True):
    want, got = _both(fn)
    lw, tw = jax.tree_util.tree_flatten(want)
    lg, tg = mjax.tree_util.tree_flatten(got)
    assert str(tw) == str(tg)
    for w, g in zip(lw, lg):
        assert getattr(w, "weak_type", None) == getattr(g, "weak_type", None)
        w, g = np.asarray(w), np.asarray(g)
        assert (w.shape, w.dtype) == (g.shape, g.dtype)
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6)


def _raises_as_jax(fn, match=None):
    """mjax raises an instance of JAX's exception class, with JAX's first line."""
    with pytest.raises(Exception) as want:
        fn(jax, jnp)
    first = str(want.value).splitlines()[0]
    with pytest.raises(type(want.value)) as got:
        fn(mjax, mnp)
    assert str(got.value).splitlines()[0] == first
    if match is not None:
        assert match in first


# ---- custom_vjp under checkpoint and nested differentiation ----------------------------
def _cvjp(J, N):
    """A custom_vjp function whose bwd is deliberately not its derivative (x 3): which
    derivative a nested differentiation takes (the rule's, or fwd's own) shows."""
    @J.custom_vjp
    def f(x):
        return N.sin(x) * x

    f.defvjp(lambda x: (N.sin(x) * x, (x,)), lambda r, g: (g * N.cos(r[0]) * 3.,))
    return f


def _loss(J, N, ckpt):
    f = _cvjp(J, N)
    g = lambda x: N.sum(f(x) ** 2)
    if ckpt == "remat":
        return J.checkpoint(g)
    if ckpt == "remat_nothing":
        return J.checkpoint(g, policy=J.checkpoint_policies.nothing_saveable)
    if ckpt == "remat_all":
        return J.checkpoint(g, policy=J.checkpoint_policies.everything_saveable)
    if ckpt == "remat_inner":
        f2 = J.checkpoint(f)
        return lambda x: N.sum(f2(x) ** 2)
    if ckpt == "jit_remat":
        return J.jit(J.checkpoint(g))
    if ckpt == "remat_scaled":
        return lambda x: J.checkpoint(g)(x) * 2.
    return g


_OUTER = {
    "hessian": lambda J, N, g: J.hessian(g)(N.asarray(X3)),
    "jacrev_jacrev": lambda J, N, g: J.jacrev(J.jacrev(g))(N.asarray(X3)),
    "grad_grad": lambda J, N, g: J.grad(lambda x: J.grad(g)(x)[0])(N.asarray(X3)),
    "jvp_grad": lambda J, N, g: J.jvp(J.grad(g), (N.asarray(X3),), (N.ones(3),)),
    "linearize_grad": lambda J, N, g: J.linearize(J.grad(g), N.asarray(X3))[1](N.ones(3)),
    "jit_hessian": lambda J, N, g: J.jit(J.hessian(g))(N.asarray(X3)),
}
_CKPTS = ["none", "remat", "remat_nothing", "remat_all", "remat_inner", "jit_remat",
          "remat_scaled"]


@pytest.mark.parametrize("ckpt", _CKPTS)
@pytest.mark.parametrize("outer", sorted(_OUTER))
def test_second_order_of_custom_vjp(ckpt, outer):
    # JAX computes a vjp's primal outputs (a checkpoint's recomputation too) by fwd, so
    # the outer differentiation takes fwd's own derivative there.
    _same(lambda J, N: _OUTER[outer](J, N, _loss(J, N, ckpt)), exact=False)


@pytest.mark.parametrize("ckpt", ["none", "remat", "remat_inner"])
@pytest.mark.parametrize("outer", ["jacfwd_jacfwd", "jacrev_jacfwd"])
def test_forward_over_custom_vjp_raises(ckpt, outer):
    def run(J, N):
        g = _loss(J, N, ckpt)
        inner = J.jacfwd(g)
        return (J.jacfwd if outer == "jacfwd_jacfwd" else J.jacrev)(inner)(N.asarray(X3))
    _raises_as_jax(run, "can't apply forward-mode autodiff (jvp) to a custom_vjp")


_PRIMAL_OUT = {
    "jacrev_vjp": lambda J, N, f: J.jacrev(lambda x: J.vjp(f, x)[0])(N.asarray(X3)),
    "jacfwd_vjp": lambda J, N, f: J.jacfwd(lambda x: J.vjp(f, x)[0])(N.asarray(X3)),
    "jacrev_linearize": lambda J, N, f: J.jacrev(lambda x: J.linearize(f, x)[0])(
        N.asarray(X3)),
    "jacfwd_linearize": lambda J, N, f: J.jacfwd(lambda x: J.linearize(f, x)[0])(
        N.asarray(X3)),
    "linearize_vjp": lambda J, N, f: J.linearize(lambda x: J.vjp(f, x)[0],
                                                 N.asarray(X3))[1](N.asarray(X3)),
    "jacrev_jit_vjp": lambda J, N, f: J.jacrev(
        lambda x: J.jit(lambda y: J.vjp(f, y)[0])(x))(N.asarray(X3)),
    "jacrev_vjp_remat": lambda J, N, f: J.jacrev(
        lambda x: J.vjp(J.checkpoint(f), x)[0])(N.asarray(X3)),
    "jacfwd_vjp_remat": lambda J, N, f: J.jacfwd(
        lambda x: J.vjp(J.checkpoint(f), x)[0])(N.asarray(X3)),
    "jacrev_pullback_remat": lambda J, N, f: J.jacrev(
        lambda x: J.vjp(J.checkpoint(f), x)[1](x)[0])(N.asarray(X3)),
    "grad_value": lambda J, N, f: J.grad(
        lambda x: J.value_and_grad(lambda y: N.sum(f(y)))(x)[0])(N.asarray(X3)),
}


@pytest.mark.parametrize("case", sorted(_PRIMAL_OUT))
def test_derivative_of_vjp_primal_outputs(case):
    # (differentiating what vjp/linearize returned as primal outputs: fwd's derivative)
    _same(lambda J, N: _PRIMAL_OUT[case](J, N, _cvjp(J, N)), exact=False)


# ---- forward mode of a custom_vjp function inside another differentiation --------------
_INNER_JVP = {
    # (JAX hands custom_lin to the enclosing differentiation where it perturbs the
    # inner jvp's primals or tangents: NotImplementedError; else its TypeError)
    "vjp_of_jvp": lambda J, N, f: J.vjp(
        lambda x: J.jvp(f, (x,), (N.ones(3),))[1], N.asarray(X3))[1](N.ones(3)),
    "grad_of_jvp": lambda J, N, f: J.grad(
        lambda x: J.jvp(f, (x,), (x,))[1].sum())(N.asarray(X3)),
    "jvp_of_jvp": lambda J, N, f: J.jvp(
        lambda x: J.jvp(f, (x,), (x,))[1], (N.asarray(X3),), (N.ones(3),)),
    "jacrev_of_jvp": lambda J, N, f: J.jacrev(
        lambda x: J.jvp(f, (x,), (N.ones(3),))[0])(N.asarray(X3)),
    "grad_of_jit_jvp": lambda J, N, f: J.grad(
        lambda x: J.jit(lambda y: J.jvp(f, (y,), (y,))[1])(x).sum())(N.asarray(X3)),
    "grad_of_constant_jvp": lambda J, N, f: J.grad(
        lambda x: J.jvp(f, (N.ones(3),), (N.ones(3),))[1].sum() * x)(2.),
    "plain_jvp": lambda J, N, f: J.jvp(f, (N.asarray(X3),), (N.ones(3),)),
    "jit_jvp": lambda J, N, f: J.jit(lambda x: J.jvp(f, (x,), (x,)))(N.asarray(X3)),
    "vmap_jvp": lambda J, N, f: J.vmap(lambda x: J.jvp(f, (x,), (x,)))(N.asarray(X)),
    "jacfwd": lambda J, N, f: J.jacfwd(f)(N.asarray(X3)),
}


@pytest.mark.parametrize("case", sorted(_INNER_JVP))
def test_jvp_of_custom_vjp_error(case):
    _raises_as_jax(lambda J, N: _INNER_JVP[case](J, N, _cvjp(J, N)))


# ---- vmap's spmd_axis_name without a mesh ------------------------------------------------
def _spmd(J, N, body, name):
    f = {"mul": lambda a: a * 2, "sum": lambda a: a.sum(),
         "grad": J.grad(lambda a: N.sum(N.sin(a)))}[body]
    return J.vmap(f, spmd_axis_name=name)(N.asarray(X))


@pytest.mark.parametrize("name", ["i", ("i", "j")])
@pytest.mark.parametrize("body", ["mul", "sum", "grad"])
def test_vmap_spmd_axis_name_without_mesh(name, body):
    _same(lambda J, N: _spmd(J, N, body, name))


def test_vmap_spmd_axis_name_unhashable():
    _raises_as_jax(lambda J, N: _spmd(J, N, "mul", ["i"]), "unhashable type: 'list'")


def test_vmap_spmd_axis_name_under_jit():
    _same(lambda J, N: J.jit(J.vmap(lambda a: N.cos(a) @ a, spmd_axis_name="b"))(
        N.asarray(X)))


# ---- traced shape arguments ----------------------------------------------------------------
_SHAPED = {
    "zeros": lambda N, n: N.zeros(n),
    "ones": lambda N, n: N.ones(n),
    "ones_tuple": lambda N, n: N.ones((n, 2)),
    "zeros_list": lambda N, n: N.zeros([2, n]),
    "full": lambda N, n: N.full(n, 1.),
    "full_tuple": lambda N, n: N.full((2, n), 1, dtype=N.int32),
    "empty": lambda N, n: N.empty((n,)),
    "ones_like": lambda N, n: N.ones_like(N.ones(3), shape=n),
    "full_like": lambda N, n: N.full_like(N.ones(3), 2., shape=(n,)),
    "reshape": lambda N, n: N.reshape(N.ones(6), (n, 2)),
    "broadcast_to": lambda N, n: N.broadcast_to(1., (n,)),
}


@pytest.mark.parametrize("how", ["jit", "vmap"])
@pytest.mark.parametrize("fn", sorted(_SHAPED))
def test_traced_shape_argument(fn, how):
    def run(J, N):
        f = lambda n: _SHAPED[fn](N, n)
        return J.jit(f)(3) if how == "jit" else J.vmap(f)(N.arange(1, 3))
    _raises_as_jax(run, "Shapes must be 1D sequences of concrete values of integer type")


@pytest.mark.parametrize("shape", [(2, 3), 4, np.int32(2), (np.int64(2), 1), []])
def test_concrete_shape_arguments(shape):
    _same(lambda J, N: (N.zeros(shape), N.ones(shape, N.int32), N.full(shape, 2.),
                        N.broadcast_to(1., shape)))


@pytest.mark.parametrize("shape", [2., (2, 1.5), "3"])
def test_non_integer_shape_arguments(shape):
    _raises_as_jax(lambda J, N: N.zeros(shape))


# ---- make_jaxpr of checkpoint with a named policy ----------------------------------------
@pytest.mark.parametrize("policy", [None, "nothing_saveable", "everything_saveable",
                                    "dots_saveable"])
def test_checkpoint_policy_prints_as_jax(policy):
    def run(J, N):
        p = None if policy is None else getattr(J.checkpoint_policies, policy)
        return str(J.make_jaxpr(J.checkpoint(lambda x: N.sin(x) * 2, policy=p))(1.))
    want, got = _both(run)
    assert got == want


@pytest.mark.parametrize("policy", ["nothing_saveable", "everything_saveable"])
def test_checkpoint_policy_gradients(policy):
    _same(lambda J, N: J.grad(J.checkpoint(lambda x: N.sum(N.sin(x) * x),
                                           policy=getattr(J.checkpoint_policies, policy)))(
        N.asarray(X)))
