"""The vmap API against jax.vmap: axis specifications (pytree prefixes, None, negative
axes, kwargs), sizes, errors, weak types, and vmap composed with grad, jit, custom
derivatives, checkpoint, closures and jacobians."""
import jax
import jax.extend  # noqa: F401  (the oracle's user primitives)
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp
from frontend_util import check

RNG = np.random.default_rng(3)
X = RNG.normal(size=(3, 4)).astype(np.float32)
Y = RNG.normal(size=(4, 3)).astype(np.float32)
V = RNG.normal(size=(3,)).astype(np.float32)


def _leaves_close(got, want, rtol=1e-5, atol=1e-6):
    g, gt = mjax.tree_util.tree_flatten(got)
    w, wt = jax.tree_util.tree_flatten(want)
    assert len(g) == len(w), (gt, wt)
    for a, b in zip(g, w):
        if type(a) is np.ndarray:    # (a NumPy argument eager vmap passed through, as JAX)
            assert type(b) is np.ndarray, type(b)
            np.testing.assert_array_equal(a, b)
            continue
        check(a, b, rtol=rtol, atol=atol)


def _both(f, *args, jit=True, **vmap_kw):
    """vmap(f) in mjax (eager and under jit) and in jax on the same inputs."""
    want = jax.vmap(f, **vmap_kw)(*args)
    _leaves_close(mjax.vmap(f, **vmap_kw)(*args), want)
    if jit:
        _leaves_close(mjax.jit(mjax.vmap(f, **vmap_kw))(*args), want)
    return want


def _same_error(mf, jf, *args, **kwargs):
    """Both raise the same exception class; returns (mjax message, jax message)."""
    with pytest.raises(Exception) as ej:
        jf(*args, **kwargs)
    with pytest.raises(type(ej.value)) as em:
        mf(*args, **kwargs)
    return str(em.value), str(ej.value)


# ---- axis specifications --------------------------------------------------------------------
@pytest.mark.parametrize("in_axes,out_axes", [(0, 0), (1, 0), (0, 1), (-1, -1), (1, -2)])
def test_in_and_out_axes_one_argument(in_axes, out_axes):
    _both(lambda x: x * 2.0 + 1.0, X, in_axes=in_axes, out_axes=out_axes)


@pytest.mark.parametrize("in_axes,out_axes", [((0, 1), 0), ((1, 0), 1), ((-2, -1), -1)])
def test_in_and_out_axes_two_arguments(in_axes, out_axes):
    # X is (3, 4), Y is (4, 3): axis 0 of X pairs with axis 1 of Y.
    _both(lambda x, y: x * y - x, X, Y, in_axes=in_axes, out_axes=out_axes)


def test_pytree_prefix_in_axes_dicts_tuples_nested_none():
    tree = {"w": X, "b": (V, {"s": np.float32(2.0)})}
    in_axes = ({"w": 0, "b": (0, None)},)
    want = _both(lambda t: (t["w"] * 2.0, t["b"][0] + t["b"][1]["s"]), tree, in_axes=in_axes)
    assert want[0].shape == (3, 4)


def test_pytree_out_axes_prefix():
    f = lambda x: {"a": x, "b": (x * 2.0, x + 1.0)}  # noqa: E731
    want = _both(f, X, out_axes={"a": 1, "b": 0})
    assert want["a"].shape == (4, 3)
    _both(f, X, out_axes={"a": -1, "b": (1, 0)})


def test_list_in_axes_and_list_outputs():
    _both(lambda x, y: [x + 1.0, y], X, V, in_axes=[0, 0])
    _both(lambda x: [x, x * 2.0], X, out_axes=[0, 1])


def test_kwargs_are_batched_on_axis_0():
    f = lambda x, y: x * 2.0 + y  # noqa: E731
    check(mjax.vmap(f, in_axes=1)(X, y=Y), jax.vmap(f, in_axes=1)(X, y=Y))
    check(mjax.vmap(f, in_axes=(0,))(X, y=X), jax.vmap(f, in_axes=(0,))(X, y=X))
    with pytest.raises(ValueError, match="inconsistent sizes"):
        mjax.vmap(lambda x, y: x + y, in_axes=(1,))(X, y=X)


def test_axis_size_when_nothing_is_batched():
    _both(lambda x: x * 2.0, X, in_axes=None, axis_size=5)
    got = mjax.vmap(lambda x: x, in_axes=None, axis_size=2)(V)
    check(got, np.stack([V, V]))


def test_unbatched_inputs_broadcast_only_in_the_output():
    _both(lambda x, w: x * w, X, V, in_axes=(1, None))


def test_scalars_and_scalar_outputs():
    _both(lambda x: x * x, V)
    _both(lambda x, s: x * s, V, 3.0, in_axes=(0, None))
    _both(lambda x: 7.0, V)


def test_non_array_leaves_with_in_axes_none():
    def f(x, how):
        return x * 2.0 if how == "double" else x
    _both(f, X, "double", in_axes=(0, None), jit=False)
    _both(lambda x, cfg: x + cfg["k"], X, {"k": 1.5, "name": "n"},
          in_axes=(0, {"k": None, "name": None}), jit=False)
    with pytest.raises(TypeError, match="not a valid"):
        mjax.vmap(lambda x, s: x)(X, "s")


def test_weak_types_preserved():
    ints = np.arange(3)
    got = mjax.vmap(lambda x: x * 2.0)(ints)
    want = jax.vmap(lambda x: x * 2.0)(ints)
    check(got, want)
    assert got.weak_type == want.weak_type
    got = mjax.vmap(lambda x: 2.0)(V)
    assert got.weak_type == jax.vmap(lambda x: 2.0)(V).weak_type
    strong = mjax.vmap(lambda x: x * 2.0)(mnp.ones(3))
    assert not strong.weak_type and strong.dtype == np.float32


def test_out_axes_none_with_an_unbatched_output():
    got = mjax.vmap(lambda x: (x * 2.0, 5.0), out_axes=(0, None))(V)
    want = jax.vmap(lambda x: (x * 2.0, 5.0), out_axes=(0, None))(V)
    check(got[0], want[0])
    assert type(got[1]) is type(want[1]) and got[1] == want[1]  # (the Python float)
    _both(lambda x, w: w * 2.0, V, X, in_axes=(0, None), out_axes=None)


def test_out_axes_none_with_a_batched_output_is_an_error():
    got, want = _same_error(mjax.vmap(lambda x: x, out_axes=None),
                            jax.vmap(lambda x: x, out_axes=None), V)
    assert "at vmap out_axes, got axis spec None but output was batched on axis 0" in got
    assert want in got


def test_out_axes_none_error_names_the_outputs_key_path():
    # (flax.nnx's vmap of StateAxes: JAX's message names the output, e.g. its 'broadcast')
    def f(x, b):
        return x + 1.0, {"broadcast": b["broadcast"] + x}
    b = {"broadcast": np.float32(1.0)}
    for out_axes in [(0, {"broadcast": None}), (0, None), None]:
        got, want = _same_error(mjax.vmap(f, in_axes=(0, None), out_axes=out_axes),
                                jax.vmap(f, in_axes=(0, None), out_axes=out_axes), V, b)
        assert want in got, (got, want)


# ---- errors ---------------------------------------------------------------------------------
def test_inconsistent_sizes_error_names_every_argument():
    got, want = _same_error(mjax.vmap(lambda a, b: a + b), jax.vmap(lambda a, b: a + b),
                            X, np.ones((4, 4), np.float32))
    assert got == want
    f = lambda a, b, c: a  # noqa: E731
    got, want = _same_error(mjax.vmap(f), jax.vmap(f), X, X, np.ones((5, 1), np.float32))
    assert got == want


@pytest.mark.parametrize("axis", [2, -3])
def test_out_of_range_in_axes(axis):
    got, want = _same_error(mjax.vmap(lambda a: a, in_axes=axis),
                            jax.vmap(lambda a: a, in_axes=axis), X)
    assert got == want


def test_out_of_range_out_axes():
    got, want = _same_error(mjax.vmap(lambda a: a, out_axes=3),
                            jax.vmap(lambda a: a, out_axes=3), X)
    assert got == want


def test_in_axes_tuple_length_mismatch():
    got, want = _same_error(mjax.vmap(lambda a, b: a, in_axes=(0,)),
                            jax.vmap(lambda a, b: a, in_axes=(0,)), X, X)
    assert got == want


def test_other_spec_errors():
    for kw, args in [({"in_axes": 1.0}, (X,)), ({"in_axes": None}, (X,)), ({}, ()),
                     ({}, (1.0,)), ({"in_axes": ({"b": 0},)}, ({"a": X},))]:
        _same_error(lambda: mjax.vmap(lambda *a: 1.0, **kw)(*args),
                    lambda: jax.vmap(lambda *a: 1.0, **kw)(*args))
    with pytest.raises(TypeError, match="Expected a callable"):
        mjax.vmap(3)


# ---- composition with AD --------------------------------------------------------------------
def _f(np_):
    return lambda x: np_.sin(x) * x ** 2


def test_vmap_of_grad():
    check(mjax.vmap(mjax.grad(_f(mnp)))(V), jax.vmap(jax.grad(_f(jnp)))(V))
    check(mjax.jit(mjax.vmap(mjax.grad(_f(mnp))))(V), jax.vmap(jax.grad(_f(jnp)))(V))


def test_grad_of_vmap():
    got = mjax.grad(lambda x: mjax.vmap(_f(mnp))(x).sum())(V)
    want = jax.grad(lambda x: jax.vmap(_f(jnp))(x).sum())(V)
    check(got, want)


def _mlp(np_):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = np_.tanh(h @ w + b)
        w, b = params[-1]
        out = h @ w + b
        return ((out - y) ** 2).mean()
    return loss


def _mlp_params(sizes=(5, 8, 8, 2)):
    return [(RNG.normal(size=(m, n)).astype(np.float32) / np.sqrt(m),
             RNG.normal(size=(n,)).astype(np.float32) * 0.1)
            for m, n in zip(sizes[:-1], sizes[1:])]


def test_per_example_gradients_of_an_mlp_match_a_loop():
    params = _mlp_params()
    xs = RNG.normal(size=(6, 5)).astype(np.float32)
    ys = RNG.normal(size=(6, 2)).astype(np.float32)
    per_example = mjax.jit(mjax.vmap(mjax.grad(_mlp(mnp)), in_axes=(None, 0, 0)))
    got = per_example(params, xs, ys)
    loop = [mjax.grad(_mlp(mnp))(params, xs[i], ys[i]) for i in range(6)]
    want = jax.tree_util.tree_map(lambda *g: np.stack([np.asarray(a) for a in g]), *loop)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-6)
    _leaves_close(got, jax.vmap(jax.grad(_mlp(jnp)), in_axes=(None, 0, 0))(params, xs, ys))


def test_hessian():
    f = lambda np_: lambda x: (np_.sin(x) * x[::-1]).sum() + (x ** 3).sum()  # noqa: E731
    check(mjax.hessian(f(mnp))(V), jax.hessian(f(jnp))(V), rtol=1e-4, atol=1e-5)
    check(mjax.vmap(mjax.hessian(f(mnp)))(X), jax.vmap(jax.hessian(f(jnp)))(X),
          rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("jac", ["jacfwd", "jacrev"])
def test_jacobians_and_vmap_of_jacobians(jac):
    f = lambda np_: lambda x, w: np_.tanh(w @ x) * x[0]  # noqa: E731
    w = RNG.normal(size=(3, 3)).astype(np.float32)
    mj, jj = getattr(mjax, jac), getattr(jax, jac)
    check(mj(f(mnp))(V, w), jj(f(jnp))(V, w), rtol=1e-5)
    _leaves_close(mj(f(mnp), argnums=(0, 1))(V, w), jj(f(jnp), argnums=(0, 1))(V, w))
    check(mjax.vmap(mj(f(mnp)), in_axes=(0, None))(X.T[:, :3].copy(), w),
          jax.vmap(jj(f(jnp)), in_axes=(0, None))(X.T[:, :3].copy(), w), rtol=1e-5)


def _custom_jvp_fn(np_, lib):
    @lib.custom_jvp
    def f(x):
        return np_.sin(x) * 2.0

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        t, = tangents
        return f(x), 3.0 * np_.cos(x) * t   # deliberately not the true derivative
    return f


def _custom_vjp_fn(np_, lib):
    @lib.custom_vjp
    def g(x, y):
        return x * y

    def fwd(x, y):
        return g(x, y), (x, y)

    def bwd(res, ct):
        x, y = res
        return (ct * y * 10.0, ct * x)   # deliberately scaled
    g.defvjp(fwd, bwd)
    return g


def test_custom_jvp_under_vmap_and_grad_of_vmap():
    mf, jf = _custom_jvp_fn(mnp, mjax), _custom_jvp_fn(jnp, jax)
    check(mjax.vmap(mf)(V), jax.vmap(jf)(V))
    check(mjax.vmap(mjax.grad(mf))(V), jax.vmap(jax.grad(jf))(V))
    check(mjax.grad(lambda x: mjax.vmap(mf)(x).sum())(V),
          jax.grad(lambda x: jax.vmap(jf)(x).sum())(V))


def test_custom_vjp_under_vmap_and_grad_of_vmap():
    mg, jg = _custom_vjp_fn(mnp, mjax), _custom_vjp_fn(jnp, jax)
    check(mjax.vmap(mg, in_axes=(0, None))(V, 2.0), jax.vmap(jg, in_axes=(0, None))(V, 2.0))
    check(mjax.vmap(mjax.grad(mg))(V, V + 1.0), jax.vmap(jax.grad(jg))(V, V + 1.0))
    check(mjax.grad(lambda x: mjax.vmap(mg)(x, V).sum())(V),
          jax.grad(lambda x: jax.vmap(jg)(x, V).sum())(V))


def _probed_custom_vjp(lib, batched):
    # A user primitive (identity) whose batching rule records that it saw a batched
    # operand: applied to w in f, fwd and bwd.
    probe = lib.extend.core.Primitive("probe_batched")
    probe.def_impl(lambda x: x)
    probe.def_abstract_eval(lambda x: x)
    lib.interpreters.mlir.register_lowering(
        probe, lib.interpreters.mlir.lower_fun(lambda x: x, multiple_results=False))

    def batch(args, dims):
        batched.append(dims)
        return probe.bind(*args), dims[0]
    lib.interpreters.batching.primitive_batchers[probe] = batch

    @lib.custom_vjp
    def g(x, w):
        return lib.numpy.sin(x) * probe.bind(w)

    def fwd(x, w):
        return g(x, w), (x, probe.bind(w))

    def bwd(res, ct):
        x, w = res
        w = probe.bind(w)
        return ct * lib.numpy.cos(x) * w, ct * lib.numpy.sin(x) * 3.0   # deliberately scaled
    g.defvjp(fwd, bwd)
    return g


@pytest.mark.parametrize("jitted", [False, True])
def test_custom_vjp_under_vmap_keeps_unbatched_inputs_unbatched(jitted):
    # JAX batches a custom_vjp's f, fwd and bwd with its unbatched inputs unbatched
    # (libraries rely on it: equinox's nonbatchable), and sums their per-example
    # cotangents.
    def run(lib):
        batched = []
        g = _probed_custom_vjp(lib, batched)
        loss = lambda x, w: lib.vmap(g, in_axes=(0, None))(x, w).sum()  # noqa: E731
        wrap = lib.jit if jitted else (lambda f: f)
        grads = wrap(lib.grad(loss, argnums=(0, 1)))(X, X[0])
        values = wrap(lib.vmap(g, in_axes=(0, None)))(X, X[0])
        return grads, values, batched
    (mgx, mgw), mv, m_batched = run(mjax)
    (jgx, jgw), jv, j_batched = run(jax)
    check(mgx, jgx)
    check(mgw, jgw)
    check(mv, jv)
    assert m_batched == j_batched == []


def test_checkpoint_under_vmap():
    f = lambda np_, lib: lib.checkpoint(lambda x: np_.sin(np_.sin(x)) * x)  # noqa: E731
    check(mjax.vmap(f(mnp, mjax))(V), jax.vmap(f(jnp, jax))(V))
    check(mjax.vmap(mjax.grad(f(mnp, mjax)))(V), jax.vmap(jax.grad(f(jnp, jax)))(V))
    check(mjax.grad(lambda x: mjax.vmap(f(mnp, mjax))(x).sum())(V),
          jax.grad(lambda x: jax.vmap(f(jnp, jax))(x).sum())(V))


# ---- composition with jit, nesting, closures --------------------------------------------------
def test_vmap_inside_jit_and_jit_inside_vmap():
    g = lambda np_: lambda x: np_.exp(x) - x  # noqa: E731
    check(mjax.jit(lambda x: mjax.vmap(g(mnp))(x) * 2.0)(X),
          jax.jit(lambda x: jax.vmap(g(jnp))(x) * 2.0)(X))
    check(mjax.vmap(mjax.jit(g(mnp)))(X), jax.vmap(jax.jit(g(jnp)))(X))
    check(mjax.vmap(mjax.jit(g(mnp)), in_axes=1, out_axes=1)(X),
          jax.vmap(jax.jit(g(jnp)), in_axes=1, out_axes=1)(X))


def test_nested_vmaps_with_different_axes():
    f = lambda x, y: x * y - x  # noqa: E731
    check(mjax.vmap(mjax.vmap(f, (0, None)), (None, 0))(V, V * 2.0),
          jax.vmap(jax.vmap(f, (0, None)), (None, 0))(V, V * 2.0))
    check(mjax.vmap(mjax.vmap(f), in_axes=1, out_axes=1)(X, X),
          jax.vmap(jax.vmap(f), in_axes=1, out_axes=1)(X, X))


def test_closures_over_outer_tracers():
    def outer_m(w):
        return mjax.vmap(lambda x: x * w + mnp.sin(w))(X)

    def outer_j(w):
        return jax.vmap(lambda x: x * w + jnp.sin(w))(X)
    check(mjax.jit(outer_m)(V[0] + 4.0), jax.jit(outer_j)(V[0] + 4.0))
    check(mjax.grad(lambda w: outer_m(w).sum())(1.5), jax.grad(lambda w: outer_j(w).sum())(1.5))
    # Closing over a batched tracer of an outer vmap.
    check(mjax.vmap(lambda a: mjax.vmap(lambda b: a * b)(V))(V),
          jax.vmap(lambda a: jax.vmap(lambda b: a * b)(V))(V))


@pytest.mark.parametrize("jac,op", [("jacfwd", "jaxpr.jvp"), ("jacrev", "jaxpr.vjp")])
def test_jacobians_are_one_vmapped_transformation_not_a_loop(jac, op):
    f = lambda x: mnp.sin(x) * x[0]  # noqa: E731
    text = mjax.jit(getattr(mjax, jac)(f)).trace(np.ones(7, np.float32)).as_text()
    assert text.count(f'"{op}"') == 1 and text.count('"jaxpr.vmap"') == 1, text


@pytest.mark.parametrize("fn", [lambda np_, lax, x: x[1:3],
                                lambda np_, lax, x: lax.slice(x, (1,), (5,), (2,))])
def test_batched_slice_prints_as_jax(fn):
    # (JAX's 101 transformations page: a vmapped slice without strides prints None)
    def run(lib, np_):
        return str(lib.jit(lib.vmap(lambda x: fn(np_, lib.lax, x))).trace(
            np.ones((2, 5), np.float32)).jaxpr)
    assert run(mjax, mnp) == run(jax, jnp)


def test_an_argument_returned_on_its_axis_is_that_argument():
    """Eager vmap returns an argument the function returns unchanged (on its own axis,
    also through a custom_jvp call) as that very object, as JAX's does (optimistix's
    `inexact_asarray` relies on it)."""
    def ident_jvp(lib):
        f = lib.custom_jvp(lambda x: x)
        f.defjvp(lambda p, t: (f(p[0]), t[0]))
        return f

    for lib, np_ in ((mjax, mnp), (jax, jnp)):
        y, m = np_.array([1.0, 2.0]), np_.ones((2, 3))
        got = [lib.vmap(lambda x: x)(y) is y,
               [o is y for o in lib.vmap(lambda x, z: (x, z * 2))(y, y)],
               lib.vmap(lambda x: x, in_axes=1, out_axes=1)(m) is m,
               lib.vmap(lambda x: x, in_axes=1, out_axes=0)(m) is m,
               lib.vmap(ident_jvp(lib))(y) is y,
               lib.jit(lib.vmap(lambda x: x))(y) is y]
        if lib is mjax:
            mine = got
    assert mine == got == [True, [True, False], True, False, True, False]
