"""Unreduced and reduced shardings inside traces (jit, grad, scan, traced shard_map), as
JAX's sharding-in-AD page uses them, against jax and NumPy on the CPU devices of
test/conftest.py: types inside and out, values, each device's partial, the all-reduces
XLA compiles, and JAX's errors."""
from __future__ import annotations

import re

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.arrays.sharding_types import ShardingTypeError

LIBS = ((mjax, jnp), (jax, jjnp))


@pytest.fixture(scope="module")
def meshes():
    return {mjax: mjax.make_mesh((2,), ("X",)), jax: jax.make_mesh((2,), ("X",))}


def shards(x):
    return {s.device.id: np.asarray(s.data) for s in x.addressable_shards}


def both(meshes, body):
    """body(lib, jnp) under each library's mesh: {lib: result}."""
    out = {}
    for lib, jnp_ in LIBS:
        with lib.set_mesh(meshes[lib]):
            out[lib] = body(lib, jnp_)
    return out


def test_reshard_to_unreduced_and_reduced_in_jit(meshes):
    def body(lib, jnp_):
        seen = []
        w = lib.device_put(jnp_.arange(8.).reshape(4, 2), lib.P(None, None))

        def f(w):
            u = lib.reshard(w, lib.P(None, None, unreduced={"X"}))
            r = lib.reshard(w, lib.P(None, None, reduced={"X"}))
            s = u + u
            seen.extend(str(lib.typeof(v)) for v in (u, r, s, jnp_.sum(u), u.T, r * 2.,
                                                     jnp_.tanh(r)))
            return u, r, lib.reshard(s, lib.P())
        u, r, total = lib.jit(f)(w)
        return seen, [str(lib.typeof(v)) for v in (u, r, total)], shards(u), \
            np.asarray(r), np.asarray(total)
    out = both(meshes, body)
    m, j = out[mjax], out[jax]
    assert m[0] == j[0]
    assert m[0][:3] == ["float32[4,2]{U:X}", "float32[4,2]{R:X}", "float32[4,2]{U:X}"]
    assert m[1] == j[1] == ["float32[4,2]{U:X}", "float32[4,2]{R:X}", "float32[4,2]"]
    assert m[2].keys() == j[2].keys()
    for k in m[2]:                       # (XLA's partials: one device holds it all)
        np.testing.assert_allclose(m[2][k], j[2][k])
    np.testing.assert_allclose(m[3], np.arange(8.).reshape(4, 2))
    np.testing.assert_allclose(m[4], 2 * np.arange(8.).reshape(4, 2))
    np.testing.assert_allclose(m[4], j[4])


def test_unreduced_array_into_jit(meshes):
    def body(lib, jnp_):
        a = lib.device_put(jnp_.arange(4.).reshape(2, 2), lib.P(None, "X"))
        b = lib.device_put(jnp_.arange(4., 8.).reshape(2, 2), lib.P("X", None))
        c = jnp_.einsum("ij,jk->ik", a, b, out_sharding=lib.P(None, None, unreduced={"X"}))
        seen = []

        def f(c):
            seen.append(str(lib.typeof(c)))
            return lib.reshard(c + c, lib.P())
        return seen, np.asarray(lib.jit(f)(c))
    out = both(meshes, body)
    assert out[mjax][0] == out[jax][0] == ["float32[2,2]{U:X}"]
    host = np.arange(4.).reshape(2, 2) @ np.arange(4., 8.).reshape(2, 2)
    np.testing.assert_allclose(out[mjax][1], 2 * host)
    np.testing.assert_allclose(out[mjax][1], out[jax][1])


def loss(w, x):
    return (x @ w) ** 2


def test_grad_of_reduced_weight_is_unreduced(meshes):
    def body(lib, jnp_):
        x = lib.device_put(jnp_.arange(8 * 4.).reshape(8, 4), lib.P("X", None))
        w = lib.device_put(jnp_.arange(4 * 2.).reshape(4, 2) / 10., lib.P(None, None))

        def loss2(w, x):          # (the weight made reduced inside: its grad is plain)
            w = lib.reshard(w, lib.P(None, None, reduced={"X"}))
            return jnp_.sum(loss(w, x))
        dw2 = lib.jit(lib.grad(loss2))(w, x)
        w_r = lib.reshard(w, lib.P(None, None, reduced={"X"}))
        seen = []

        def g(w_r, x):
            dw = lib.grad(lambda w, x: jnp_.sum(loss(w, x)))(w_r, x)
            seen.append(str(lib.typeof(dw)))
            return dw
        dw = lib.jit(g)(w_r, x)
        dw_eager = lib.grad(lambda w, x: jnp_.sum(loss(w, x)))(w_r, x)
        return ([str(lib.typeof(v)) for v in (dw2, dw, dw_eager)] + seen,
                [np.asarray(lib.reshard(v, lib.P())) for v in (dw2, dw, dw_eager)])
    out = both(meshes, body)
    assert out[mjax][0] == out[jax][0]
    assert out[mjax][0] == ["float32[4,2]", "float32[4,2]{U:X}", "float32[4,2]{U:X}",
                            "float32[4,2]{U:X}"]
    x = np.arange(8 * 4.).reshape(8, 4)
    w = np.arange(4 * 2.).reshape(4, 2) / 10.
    want = x.T @ (2 * (x @ w))           # the replicated gradient
    for got, ref in zip(out[mjax][1], out[jax][1]):
        np.testing.assert_allclose(got, want, rtol=1e-5)
        np.testing.assert_allclose(got, ref, rtol=1e-5)


def _step(lib, jnp_):
    def predict(stacked_ws, xs):
        def apply_layer(xs, w):
            return jnp_.tanh(xs @ w), None
        return lib.lax.scan(apply_layer, xs, stacked_ws)[0]

    def loss3(stacked_ws, batch):
        return jnp_.sum(predict(stacked_ws, batch) ** 2)

    seen = []

    @lib.jit
    def step(stacked_ws, xs):
        def microbatch_step(grad_acc, xs_mb):
            grads = lib.grad(loss3)(stacked_ws, xs_mb)
            seen.append(set(lib.typeof(grads).sharding.spec.unreduced))
            return grad_acc + grads, None
        grad_acc = lib.reshard(jnp_.zeros_like(stacked_ws), lib.P(unreduced={"X"}))
        grad_acc, _ = lib.lax.scan(microbatch_step, grad_acc, xs)
        grads = lib.reshard(grad_acc, lib.P())
        return lib.reshard(stacked_ws, lib.P()) - 0.01 * grads
    return step, seen


def test_scan_accumulating_unreduced_grads(meshes):
    def body(lib, jnp_):
        step, seen = _step(lib, jnp_)
        ws = np.stack([np.eye(4) / 2 + 0.1 * k for k in range(3)]).astype(np.float32)
        xs_host = np.linspace(-1, 1, 5 * 2 * 4, dtype=np.float32).reshape(5, 2, 4)
        stacked_ws = lib.device_put(jnp_.asarray(ws), lib.P(reduced={"X"}))
        xs = lib.device_put(jnp_.asarray(xs_host), lib.P(None, "X", None))
        new = step(stacked_ws, xs)
        hlo = step.lower(stacked_ws, xs).compile().as_text()
        n_all_reduce = sum('all-reduce(' in ln or 'all-reduce-start(' in ln
                           for ln in hlo.splitlines())
        return seen, str(lib.typeof(new)), np.asarray(new), n_all_reduce
    out = both(meshes, body)
    for seen in (out[mjax][0], out[jax][0]):     # (mjax may trace the body again)
        assert seen and all(s == {"X"} for s in seen)
    assert out[mjax][1] == out[jax][1] == "float32[3,4,4]"
    np.testing.assert_allclose(out[mjax][2], out[jax][2], rtol=1e-5, atol=1e-6)
    # One all-reduce in each (mjax's sits in the loop: see docs/design.md).
    assert out[mjax][3] == out[jax][3] == 1


def test_reduced_grad_against_replicated(meshes):
    """The unreduced gradient of a reduced weight, resharded to P(), equals the gradient
    of the same weight replicated."""
    with mjax.set_mesh(meshes[mjax]):
        x = mjax.device_put(jnp.linspace(-1., 1., 32).reshape(8, 4), mjax.P("X", None))
        w = mjax.device_put(jnp.arange(8.).reshape(4, 2) / 10, mjax.P(None, None))
        f = lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)   # noqa: E731
        w_r = mjax.reshard(w, mjax.P(None, None, reduced={"X"}))
        dw_u = mjax.jit(mjax.grad(f))(w_r, x)
        dw = mjax.jit(mjax.grad(f))(w, x)
        assert str(mjax.typeof(dw_u)) == "float32[4,2]{U:X}"
        assert str(mjax.typeof(dw)) == "float32[4,2]"
        np.testing.assert_allclose(np.asarray(mjax.reshard(dw_u, mjax.P())),
                                   np.asarray(dw), rtol=1e-5)


def test_shard_map_unreduced_out_specs_under_jit_and_grad(meshes):
    def body(lib, jnp_):
        a = lib.device_put(jnp_.arange(4.).reshape(2, 2), lib.P(None, "X"))
        b = lib.device_put(jnp_.arange(4., 8.).reshape(2, 2), lib.P("X", None))

        @lib.shard_map(in_specs=(lib.P(None, "X"), lib.P("X", None)),
                       out_specs=lib.P(None, None, unreduced={"X"}))
        def matmul_partial(a, b):
            return lib.lax.pcast(a @ b, "X", to="unreduced")

        def matmul_loss(a, b):
            return jnp_.sum(lib.reshard(matmul_partial(a, b), lib.P(None, None)) ** 2)
        c = lib.jit(matmul_partial)(a, b)
        da, db = lib.jit(lib.grad(matmul_loss, argnums=(0, 1)))(a, b)
        return (str(lib.typeof(c)), shards(c), np.asarray(lib.reshard(c, lib.P())),
                str(lib.typeof(da)), str(lib.typeof(db)), np.asarray(da), np.asarray(db))
    out = both(meshes, body)
    m, j = out[mjax], out[jax]
    assert m[0] == j[0] == "float32[2,2]{U:X}"
    assert (m[3], m[4]) == (j[3], j[4])
    a, b = np.arange(4.).reshape(2, 2), np.arange(4., 8.).reshape(2, 2)
    for k, part in m[1].items():       # (device k: a[:, k] (x) b[k, :])
        np.testing.assert_allclose(part, np.outer(a[:, k], b[k]))
        np.testing.assert_allclose(part, j[1][k])
    np.testing.assert_allclose(m[2], a @ b)
    g = 2 * (a @ b)
    np.testing.assert_allclose(m[5], g @ b.T)
    np.testing.assert_allclose(m[6], a.T @ g)
    np.testing.assert_allclose(m[5], j[5])
    np.testing.assert_allclose(m[6], j[6])


def test_shard_map_reduced_in_spec_grad_is_unreduced(meshes):
    def body(lib, jnp_):
        x = lib.device_put(jnp_.arange(8 * 4.).reshape(8, 4) / 32, lib.P("X", None))
        w = lib.device_put(jnp_.arange(4 * 2.).reshape(4, 2) / 10., lib.P(None, None))
        w_r = lib.reshard(w, lib.P(None, None, reduced={"X"}))

        seen = []

        @lib.shard_map(in_specs=(lib.P("X", None), lib.P(None, None, reduced={"X"})),
                       out_specs=lib.P("X", None))
        def apply_layer(x, w):
            seen.append(str(lib.typeof(w)))
            return jnp_.tanh(x @ w)
        dw = lib.jit(lib.grad(lambda w, x: jnp_.sum(apply_layer(x, w) ** 2)))(w_r, x)
        return str(lib.typeof(dw)), np.asarray(lib.reshard(dw, lib.P())), sorted(set(seen))
    out = both(meshes, body)
    assert out[mjax][0] == out[jax][0] == "float32[4,2]{U:X}"
    assert out[mjax][2] == out[jax][2] == ["float32[4,2]{R:X}"]
    np.testing.assert_allclose(out[mjax][1], out[jax][1], rtol=1e-5)


@pytest.mark.parametrize("op, error", [
    (lambda u, jnp_: jnp_.cos(u), NotImplementedError),
    (lambda u, jnp_: -u, NotImplementedError),
    (lambda u, jnp_: u + 1.0, ShardingTypeError),
    (lambda u, jnp_: u * 2.0, ShardingTypeError),
    (lambda u, jnp_: u * u, ShardingTypeError),
    (lambda u, jnp_: u @ u.T, ShardingTypeError),
])
def test_invalid_ops_on_unreduced_in_jit(meshes, op, error):
    msgs = {}
    for lib, jnp_ in LIBS:
        with lib.set_mesh(meshes[lib]):
            w = lib.device_put(jnp_.arange(8.).reshape(4, 2), lib.P(None, None))

            def f(w):
                u = lib.reshard(w, lib.P(None, None, unreduced={"X"}))
                return lib.reshard(op(u, jnp_), lib.P())
            with pytest.raises(Exception) as info:
                lib.jit(f)(w)
            # (Up to the types shown: mjax broadcasts a Python scalar operand first, so
            # `u * 2.` shows rhs=float32[4,2] where JAX shows rhs=float32[].)
            msgs[lib] = (type(info.value).__name__, str(info.value).split(" Got ")[0])
    assert msgs[mjax] == msgs[jax]
    assert msgs[mjax][0] == error.__name__


def test_reduced_operands_must_agree(meshes):
    msgs = {}
    for lib, jnp_ in LIBS:
        with lib.set_mesh(meshes[lib]):
            w = lib.device_put(jnp_.arange(8.).reshape(4, 2), lib.P(None, None))

            def f(w):
                r = lib.reshard(w, lib.P(None, None, reduced={"X"}))
                return r + lib.reshard(w, lib.P())
            with pytest.raises(Exception) as info:
                lib.jit(f)(w)
            msgs[lib] = (type(info.value).__name__, str(info.value))
    assert msgs[mjax] == msgs[jax]
    assert msgs[mjax][0] == "ShardingTypeError"


def test_unreduced_sdy_lowering(meshes):
    with mjax.set_mesh(meshes[mjax]):
        w = mjax.device_put(jnp.arange(8.).reshape(4, 2), mjax.P(None, None))
        text = mjax.jit(lambda w: mjax.reshard(w, mjax.P(None, None, unreduced={"X"}))
                        ).lower(w).as_text()
    assert re.search(r'unreduced=\{"X"\}', text)


def test_jit_in_and_out_shardings_unreduced(meshes):
    out = {}
    for lib, jnp_ in LIBS:
        with lib.set_mesh(meshes[lib]):
            mesh = meshes[lib]
            w = lib.device_put(jnp_.arange(8.).reshape(4, 2), lib.P(None, None))
            u_sharding = lib.NamedSharding(mesh, lib.P(None, None, unreduced={"X"}))
            with pytest.raises(ValueError, match="does not match the sharding"):
                lib.jit(lambda u: lib.reshard(u, lib.P()), in_shardings=u_sharding)(w)
            u = lib.jit(lambda v: v * 1, out_shardings=u_sharding)(w)
            back = lib.jit(lambda u: lib.reshard(u, lib.P()), in_shardings=u_sharding)(u)
            out[lib] = str(lib.typeof(u)), shards(u), np.asarray(back)
    assert out[mjax][0] == out[jax][0] == "float32[4,2]{U:X}"
    for k in out[jax][1]:
        np.testing.assert_allclose(out[mjax][1][k], out[jax][1][k])
    np.testing.assert_allclose(out[mjax][2], np.arange(8.).reshape(4, 2))


def test_loop_carries_keep_unreduced_types(meshes):
    def body(lib, jnp_):
        seen = []
        w = lib.device_put(jnp_.arange(8.).reshape(4, 2), lib.P(None, None))
        x = lib.device_put(jnp_.ones((2, 2, 4)), lib.P(None, "X", None))

        def f(w, x):
            acc = lib.reshard(jnp_.zeros_like(w), lib.P(unreduced={"X"}))
            w_r = lib.reshard(w, lib.P(reduced={"X"}))

            def step(c, xr):
                return c + lib.grad(lambda w: jnp_.sum(xr @ w))(w_r), None
            acc, _ = lib.lax.scan(step, acc, x)
            acc2 = lib.lax.fori_loop(0, 2, lambda i, c: c + c, acc)
            seen.extend(str(lib.typeof(v)) for v in (acc, acc2))
            return lib.reshard(acc2, lib.P())
        return seen, np.asarray(lib.jit(f)(w, x))
    out = both(meshes, body)
    assert out[mjax][0] == out[jax][0] == ["float32[4,2]{U:X}"] * 2
    np.testing.assert_allclose(out[mjax][1], np.full((4, 2), 16.))
    np.testing.assert_allclose(out[mjax][1], out[jax][1])


def test_unreduced_argument_without_shardy_is_refused(meshes):
    """A function with a constraint inside a loop body compiles with XLA's own
    shardings, which cannot keep partial sums: an unreduced argument is refused rather
    than read as a replicated value."""
    with mjax.set_mesh(meshes[mjax]):
        a = mjax.device_put(jnp.arange(4.).reshape(2, 2), mjax.P(None, "X"))
        b = mjax.device_put(jnp.arange(4., 8.).reshape(2, 2), mjax.P("X", None))
        c = jnp.einsum("ij,jk->ik", a, b, out_sharding=mjax.P(None, None, unreduced={"X"}))

        def f(c):
            body = lambda carry, _: (mjax.reshard(carry * 1.0, mjax.P(None, None)), None)  # noqa: E731
            return mjax.lax.scan(body, mjax.reshard(c, mjax.P()), None, length=2)[0]
        with pytest.raises(NotImplementedError, match="without Shardy"):
            mjax.jit(f)(c)
        np.testing.assert_allclose(np.asarray(mjax.jit(f)(mjax.reshard(c, mjax.P()))),
                                   np.arange(4.).reshape(2, 2) @ np.arange(4., 8.).reshape(2, 2))


def test_grad_through_unreduced_reshard(meshes):
    """The transpose of a cast to unreduced is a cast to reduced: gradients through an
    unreduced einsum and a reshard to unreduced, eagerly and under jit."""
    def body(lib, jnp_):
        x = lib.device_put(jnp_.arange(8.).reshape(2, 4), lib.P(None, "X"))
        y = lib.device_put(jnp_.arange(8.).reshape(4, 2), lib.P("X", None))
        w = lib.device_put(jnp_.arange(4.).reshape(2, 2), lib.P(None, None))

        def loss(x, y):
            u = jnp_.einsum("ij,jk->ik", x, y,
                            out_sharding=lib.P(None, None, unreduced={"X"}))
            return jnp_.sum(lib.reshard(u, lib.P()) ** 2)

        def loss2(w):
            u = lib.reshard(w, lib.P(None, None, unreduced={"X"}))
            return jnp_.sum(lib.reshard(u, lib.P()) ** 2)
        out = []
        for g in (lib.grad(loss, argnums=(0, 1)), lib.jit(lib.grad(loss, argnums=(0, 1)))):
            out += [(str(lib.typeof(v)), np.asarray(v)) for v in g(x, y)]
        for g in (lib.grad(loss2), lib.jit(lib.grad(loss2))):
            v = g(w)
            out.append((str(lib.typeof(v)), np.asarray(v)))
        return out
    out = both(meshes, body)
    x, y = np.arange(8.).reshape(2, 4), np.arange(8.).reshape(4, 2)
    want = [2 * (x @ y) @ y.T, x.T @ (2 * (x @ y))] * 2 + [2 * np.arange(4.).reshape(2, 2)] * 2
    for (mt, mv), (jt, jv), ref in zip(out[mjax], out[jax], want):
        assert mt == jt
        np.testing.assert_allclose(mv, ref)
        np.testing.assert_allclose(mv, jv)


def test_grad_of_reduced_weight_needs_no_all_reduce(meshes):
    """The unreduced gradient keeps the contraction's partial sums: no all-reduce."""
    def body(lib, jnp_):
        x = lib.device_put(jnp_.linspace(-1., 1., 32).reshape(8, 4), lib.P("X", None))
        w = lib.device_put(jnp_.arange(8.).reshape(4, 2) / 10., lib.P(None, None))
        w_r = lib.reshard(w, lib.P(None, None, reduced={"X"}))
        g = lib.jit(lambda w, x: lib.grad(lambda w, x: jnp_.sum(jnp_.tanh(x @ w) ** 2))(w, x))
        hlo = g.lower(w_r, x).compile().as_text()
        return sum("all-reduce(" in ln for ln in hlo.splitlines()), \
            np.asarray(lib.reshard(g(w_r, x), lib.P()))
    out = both(meshes, body)
    assert out[mjax][0] == out[jax][0] == 0
    np.testing.assert_allclose(out[mjax][1], out[jax][1], rtol=1e-5)


def test_pcast_reduced_and_unreduced_in_traced_shard_map(meshes):
    def body(lib, jnp_):
        seen = []
        x = lib.device_put(jnp_.arange(8.).reshape(4, 2) / 8, lib.P("X", None))
        w = lib.device_put(jnp_.arange(4.).reshape(2, 2), lib.P(None, None))

        @lib.shard_map(in_specs=(lib.P("X", None), lib.P(None, None)),
                       out_specs=lib.P("X", None))
        def f(x, w):
            wr = lib.lax.pcast(w, "X", to="reduced")
            seen.append(str(lib.typeof(wr)))
            return jnp_.tanh(x @ wr)

        @lib.shard_map(in_specs=(lib.P(None, "X"), lib.P("X", None)),
                       out_specs=lib.P(None, None, unreduced={"X"}))
        def partial(a, b):
            u = lib.lax.pcast(a @ b, "X", to="unreduced")
            seen.append(str(lib.typeof(u)))
            return u
        g = lib.jit(lib.grad(lambda w, x: jnp_.sum(f(x, w) ** 2)))(w, x)
        lib.jit(partial)(x.T, x)
        errors = []
        for to in ("reduced", "unreduced", "varying"):
            with pytest.raises(Exception) as info:
                lib.jit(lambda w: lib.lax.pcast(w, "X", to=to))(w)
            errors.append((type(info.value).__name__, str(info.value)))
        return sorted(set(seen)), str(lib.typeof(g)), np.asarray(g), errors
    out = both(meshes, body)
    m, j = out[mjax], out[jax]
    assert m[0] == j[0] == ["float32[2,2]{R:X}", "float32[2,2]{U:X}"]
    assert m[1] == j[1]
    np.testing.assert_allclose(m[2], j[2], rtol=1e-5)
    assert m[3] == j[3]
