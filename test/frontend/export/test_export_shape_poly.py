"""Shape polymorphism end to end: tracing with symbolic dimensions, lowering to StableHLO's
dynamic forms, `mjax.export` serialized once and called, refined, for any batch size (and
under jit and grad); jaxprs and errors against jax's."""
import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import export, lax

RNG = np.random.default_rng(0)


def _mlp(lib, params, x):
    for w, b in params:
        x = lib.numpy.tanh(x @ w + b)
    return lib.numpy.mean(x, axis=0)       # (over the batch: the symbolic dimension)


MLP_PARAMS = [(RNG.normal(size=(4, 16)).astype(np.float32), RNG.normal(size=16).astype(np.float32)),
              (RNG.normal(size=(16, 3)).astype(np.float32), RNG.normal(size=3).astype(np.float32))]


def _cnn(lib, params, x, labels):
    w1, w2, wd, bd = params
    dn = ("NHWC", "HWIO", "NHWC")
    y = lib.nn.relu(lib.lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=dn))
    y = lib.lax.reduce_window(y, -np.inf, lib.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    y = lib.nn.relu(lib.lax.conv_general_dilated(y, w2, (1, 1), "SAME", dimension_numbers=dn))
    y = y.reshape((y.shape[0], -1))
    logp = lib.nn.log_softmax(y @ wd + bd)
    return -lib.numpy.mean(lib.numpy.sum(logp * labels, axis=-1))


CNN_PARAMS = [RNG.normal(size=s).astype(np.float32) * 0.3
              for s in [(3, 3, 1, 4), (3, 3, 4, 8), (4 * 4 * 8, 10), (10,)]]


def _cnn_batch(n):
    x = RNG.normal(size=(n, 8, 8, 1)).astype(np.float32)
    return x, np.eye(10, dtype=np.float32)[RNG.integers(0, 10, n)]


def _close(a, b, tol=2e-5):
    for u, v in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=tol, atol=tol)


def test_mlp_exported_once_runs_for_every_batch_size():
    (b,) = export.symbolic_shape("b")
    exp = export.export(mjax.jit(lambda p, x: _mlp(mjax, p, x)))(
        MLP_PARAMS, mjax.ShapeDtypeStruct((b, 4), np.float32))
    assert str(exp.in_avals[-1]) == "float32[b,4]" and str(exp.out_avals[0]) == "float32[3]"
    assert "tensor<?x4xf32>" in exp.mlir_module()
    assert "jax.uses_shape_polymorphism = true" in exp.mlir_module()
    restored = export.deserialize(exp.serialize(vjp_order=1))
    assert str(restored.in_avals[-1]) == "float32[b,4]"
    loss = lambda p, x: jnp.sum(restored.call(p, x) ** 2)          # noqa: E731
    jloss = lambda p, x: jax.numpy.sum(_mlp(jax, p, x) ** 2)       # noqa: E731
    for n in (1, 7, 128):
        x = RNG.normal(size=(n, 4)).astype(np.float32)
        # (jax's values on the same platform: a TPU's tanh is not NumPy's)
        want = _mlp(jax, MLP_PARAMS, x)
        _close(restored.call(MLP_PARAMS, x), want)
        _close(mjax.jit(restored.call)(MLP_PARAMS, x), want)
        _close(mjax.grad(loss)(MLP_PARAMS, x), jax.grad(jloss)(MLP_PARAMS, x))


def test_cnn_exported_once_runs_for_every_batch_size_with_gradients():
    (b,) = export.symbolic_shape("b")
    specs = (mjax.ShapeDtypeStruct((b, 8, 8, 1), np.float32),
             mjax.ShapeDtypeStruct((b, 10), np.float32))
    exp = export.export(mjax.jit(lambda p, x, y: _cnn(mjax, p, x, y)))(CNN_PARAMS, *specs)
    restored = export.deserialize(exp.serialize(vjp_order=1))
    for n in (1, 7, 128):
        x, labels = _cnn_batch(n)
        want = _cnn(jax, CNN_PARAMS, x, labels)
        _close(restored.call(CNN_PARAMS, x, labels), want, 1e-4)
        _close(mjax.grad(restored.call)(CNN_PARAMS, x, labels),
               jax.grad(lambda p: _cnn(jax, p, x, labels))(CNN_PARAMS), 1e-4)


def test_calls_that_do_not_meet_the_shapes_are_refused():
    a, b = export.symbolic_shape("a, b", constraints=["b >= 2"])
    exp = export.export(mjax.jit(lambda x, y: x.sum() + y.sum()))(
        mjax.ShapeDtypeStruct((a, b), np.float32), mjax.ShapeDtypeStruct((2 * b + 1,), np.float32))
    assert float(exp.call(np.ones((3, 2), np.float32), np.ones(5, np.float32))) == 11.0
    with pytest.raises(ValueError, match=r"'a' .* integer value >= 1. Found 0 .*args\[0\].shape\[0\]"):
        exp.call(np.ones((0, 2), np.float32), np.ones(5, np.float32))
    with pytest.raises(ValueError, match=r"args\[1\].shape\[0\] \(= 7\) and the specification "
                                         r"'2\*b \+ 1' \(= 5\)"):
        exp.call(np.ones((3, 2), np.float32), np.ones(7, np.float32))
    with pytest.raises(ValueError, match=r"'b' .* is 1, out of the range"):
        exp.call(np.ones((3, 1), np.float32), np.ones(3, np.float32))
    with pytest.raises(ValueError, match="Rank mismatch"):
        exp.call(np.ones(3, np.float32), np.ones(5, np.float32))
    static = export.export(mjax.jit(lambda x: x))(mjax.ShapeDtypeStruct((a, 4), np.float32))
    with pytest.raises(ValueError, match=r"Shape mismatch for args\[0\].shape\[1\]"):
        static.call(np.ones((3, 5), np.float32))


def test_constraints_survive_serialization():
    (b,) = export.symbolic_shape("b", constraints=["b >= 4"])
    exp = export.export(mjax.jit(lambda x: x * 2))(mjax.ShapeDtypeStruct((b,), np.float32))
    restored = export.deserialize(exp.serialize())
    assert restored.in_avals[0].shape[0] >= 4      # (decided by the restored constraint)
    np.testing.assert_array_equal(restored.call(np.ones(4, np.float32)), 2 * np.ones(4))
    with pytest.raises(ValueError, match="out of the range"):
        restored.call(np.ones(3, np.float32))


# A program of each kind, exported once with x: f32[b, 4], must give what jit gives on
# each concrete x: shape rules, lowering rules (dynamic forms), AD and batching rules and
# control flow over a symbolic dimension.
PROGRAMS = {
    "reductions": lambda x: (x.sum(0), x.max(1), jnp.mean(x), jnp.var(x, axis=0),
                             jnp.argmax(x, 0), mjax.nn.logsumexp(x, 0)),
    "sort": lambda x: (jnp.sort(x, 0), jnp.argsort(x, axis=0), lax.top_k(x, 2)[0]),
    "matmul": lambda x: (x @ x.T, x.T @ x, jnp.einsum("bi,bj->bij", x, x),
                         jnp.triu(x @ x.T), jnp.diag(x @ x.T)),
    "reshape": lambda x: (x.reshape(-1), x.reshape(-1, 2), x.reshape(x.shape[0], 2, 2),
                          x[:, None, :], jnp.squeeze(x[:, :1], 1), x.reshape(x.shape[0] * 2, 2)),
    "combine": lambda x: (jnp.concatenate([x, x]), jnp.stack([x, x], 1), jnp.tile(x, (2, 1)),
                          jnp.pad(x, ((1, 2), (0, 1))), jnp.flip(x, 0), jnp.roll(x, 1, 0),
                          jnp.broadcast_to(x[:, :1], x.shape)),
    "index": lambda x: (x[0], x[-1], x[2], x[-3], x[1:], x[:-1], x[-2:], x[1::2], x[:, 1:3],
                        x[::-1], x[-2::-2], x[3:0:-1], x[jnp.array([0, 0])],
                        jnp.take(x, jnp.array([1, 2]), axis=1),
                        jnp.take(x, jnp.array([1, 5]), axis=0),
                        jnp.take(x, jnp.array([1, 5]), axis=0, mode="clip"),
                        lax.dynamic_slice_in_dim(x, 0, 1, 0)),
    "update": lambda x: (x.at[0].set(1.0), x.at[:, 1].add(1.0), x.at[-1, 2:].multiply(3.0),
                         x.at[1:].max(2.0), x.at[jnp.array([0, 9])].add(1.0),
                         x.at[jnp.array([0, 9])].get(mode="fill", fill_value=-1.0)),
    "cumulative": lambda x: (jnp.cumsum(x, 0), lax.cummax(x, 0), jnp.cumprod(x, 1),
                             lax.cumlogsumexp(x, 0, reverse=True),
                             mjax.grad(lambda x: (jnp.cumsum(x, 0) ** 2).sum())(x)),
    "creation": lambda x: (x + jnp.arange(x.shape[0])[:, None], jnp.zeros_like(x) + 1,
                           jnp.full((x.shape[0],), 2.0), jnp.eye(x.shape[0]) @ x,
                           x * x.size, x * x.shape[0] / 2),
    "random": lambda x: (x + mjax.random.normal(mjax.random.key(0), x.shape),
                         mjax.random.uniform(mjax.random.key(1), (x.shape[0],))),
    "control_flow": lambda x: (
        lax.scan(lambda c, r: (c + r, c * 2), jnp.zeros(4), x)[1],
        lax.scan(lambda c, r: (c + r, c), jnp.zeros(4), x, reverse=True, unroll=2)[1],
        lax.fori_loop(0, 3, lambda i, c: c * 2, x),
        lax.cond(x.sum() > 0, lambda x: x, lambda x: -x, x)),
    "transformations": lambda x: (
        mjax.vmap(lambda r: r.sum() * r)(x),
        mjax.grad(lambda x: jnp.mean(jnp.tanh(x)))(x),
        mjax.grad(lambda x: lax.scan(lambda c, r: (c * r, c), jnp.ones(4), x)[0].sum())(x),
        mjax.grad(lambda x: (x[1::2] ** 2).sum() + x[-2:].sum())(x),
        mjax.grad(lambda x: mjax.checkpoint(jnp.sin)(x).sum())(x),
        mjax.jvp(jnp.sin, (x,), (x,))[1]),
    "nn": lambda x: (mjax.nn.softmax(x), mjax.nn.one_hot(jnp.argmax(x, 1), 4),
                     lax.reduce_window(x, 0.0, lax.add, (2, 1), (1, 1), "VALID"),
                     lax.conv_general_dilated(x[:, None, :], jnp.ones((2, 1, 3)), (1,), "SAME")),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_exported_with_a_symbolic_batch_match_jit(name):
    (b,) = export.symbolic_shape("b")
    f = PROGRAMS[name]
    exp = export.deserialize(export.export(mjax.jit(f))(
        mjax.ShapeDtypeStruct((b, 4), np.float32)).serialize())
    for n in (1, 3, 6):
        x = np.random.default_rng(n).normal(size=(n, 4)).astype(np.float32)
        got, want = exp.call(x), mjax.jit(f)(x)
        for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert np.shape(g) == np.shape(w)
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                       rtol=2e-5, atol=2e-5)


def _jaxpr(lib, fun, shape):
    (b,) = lib.export.symbolic_shape("b")
    dims = tuple(b if d == "b" else d for d in shape)
    return str(lib.make_jaxpr(fun(lib))(lib.ShapeDtypeStruct(dims, np.float32)))


@pytest.mark.parametrize("fun", [
    lambda lib: lambda x: lib.numpy.mean(x, axis=0),
    lambda lib: lambda x: x.reshape((-1,)) * 2.0,
    lambda lib: lambda x: lib.numpy.sum(x * x.shape[0]),
    lambda lib: lambda x: lib.numpy.zeros((x.shape[0] * 2, 3)),
    lambda lib: lambda x: lib.numpy.concatenate([x, x]),
    lambda lib: lambda x: lib.numpy.tanh(x) @ lib.numpy.ones((4, 2)),
])
def test_jaxprs_with_symbolic_dimensions_print_as_jax(fun):
    assert _jaxpr(mjax, fun, ("b", 4)) == _jaxpr(jax, fun, ("b", 4))


def test_eval_shape_and_the_refusal_to_compile():
    (b,) = export.symbolic_shape("b")
    spec = mjax.ShapeDtypeStruct((b, 3), np.float32)
    out = mjax.eval_shape(lambda x: jnp.concatenate([x, x]).sum(1), spec)
    assert str(out.shape) == "(2*b,)"
    assert "tensor<?x3xf32>" in mjax.jit(jnp.sin).lower(spec).as_text()
    with pytest.raises(ValueError, match=r"Error refining shapes: .*symbolic dimensions \(b\)"):
        mjax.jit(jnp.sin).lower(spec).compile()
    with pytest.raises(TypeError, match="symbolic dimensions"):
        mjax.jit(jnp.sin).lower(mjax.ShapeDtypeStruct(("b", 3), np.float32))


def test_inconclusive_comparisons_while_tracing_raise_jax_error():
    (b,) = export.symbolic_shape("b")

    def f(x):
        if x.shape[0] >= 2:      # (not decided for b >= 1)
            return x
        return x + 1
    with pytest.raises(mjax.errors.InconclusiveDimensionOperation):
        export.export(mjax.jit(f))(mjax.ShapeDtypeStruct((b,), np.float32))


def test_split_jits_get_names_the_module_does_not_hold(monkeypatch):
    """grad splits a jit into forward and backward copies with fresh names, here as in a
    fresh process (the copies' counter starting at 0, monkeypatched): the copies must not
    take the names of a restored export's functions (they once did, named from a second
    counter, and the backward got no residuals)."""
    import itertools
    import mjax.tracing.staging
    monkeypatch.setattr(mjax.tracing.staging, "_copies", itertools.count())
    (b,) = export.symbolic_shape("b")
    exp = export.export(mjax.jit(lambda p, x: _mlp(mjax, p, x)))(
        MLP_PARAMS, mjax.ShapeDtypeStruct((b, 4), np.float32))
    restored = export.deserialize(exp.serialize(vjp_order=1))
    x = RNG.normal(size=(5, 4)).astype(np.float32)
    loss = lambda p, x: jnp.sum(restored.call(p, x) ** 2)          # noqa: E731
    jloss = lambda p, x: jax.numpy.sum(_mlp(jax, p, x) ** 2)       # noqa: E731
    _close(mjax.grad(loss)(MLP_PARAMS, x), jax.grad(jloss)(MLP_PARAMS, x))
