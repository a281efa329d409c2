"""Programs a user writes (grad, vmap, loops, custom rules, checkify, sharding, ...),
traced to `jaxpr`-dialect text: seeds for the IR fuzzer (ir_fuzz.py)."""
from __future__ import annotations

import os

import numpy as np

# Meshes of two CPU devices (as conftest.py gives the test suite), set before jaxlib
# makes its client.
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import mjax
import mjax.numpy as jnp
from mjax import lax
from mjax.experimental import checkify
from mjax.sharding import Mesh


@mjax.custom_vjp
def _clip_grad(x):
    return jnp.sin(x)


_clip_grad.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)),
                  lambda c, g: (jnp.clip(g * c, -1.0, 1.0),))


@mjax.custom_jvp
def _softplus(x):
    return jnp.log1p(jnp.exp(x))


_softplus.defjvp(lambda p, t: (_softplus(p[0]), t[0] * mjax.nn.sigmoid(p[0])))


def _loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


def _scan_cumsum(x):
    return lax.scan(lambda c, v: (c + v, c * v), 0.0, x)


def _while(x):
    return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))[1]


def _switch(i, x):
    return lax.switch(i, [jnp.sin, jnp.cos, lambda v: -v], x)


def _checked(x):
    checkify.check(jnp.all(x > -10), "x too small: {}", x[0])
    return jnp.log(x) / x


def _pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def _conv(x, k):
    return lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO",
                                                                             "NHWC"))


def _sharded(x):
    y = lax.with_sharding_constraint(jnp.sin(x), mjax.NamedSharding(_mesh(), mjax.P("d")))
    return y * 2


def _mesh():
    return Mesh(np.array(mjax.devices()[:2]), ("d",))    # (axis type Auto)


def _in_sharded(x):
    return jnp.tanh(x) @ x.T


def _shard_mapped(x):
    return mjax.shard_map(lambda v: lax.psum(jnp.sin(v), "d"), mesh=_mesh(),
                          in_specs=mjax.P("d"), out_specs=mjax.P())(x)


def programs():
    """(name, function, example arguments)."""
    f32 = lambda *s: np.linspace(0.5, 1.5, int(np.prod(s)), dtype=np.float32).reshape(s)
    w, x = f32(3, 2), f32(4, 3)
    return [
        ("grad", mjax.grad(_loss), (w, x)),
        ("value_and_grad", mjax.value_and_grad(_loss, argnums=(0, 1)), (w, x)),
        ("hessian", mjax.hessian(lambda v: jnp.sum(jnp.sin(v) * v)), (f32(3),)),
        ("jvp", lambda v, t: mjax.jvp(jnp.tanh, (v,), (t,)), (f32(3), f32(3))),
        ("vmap", mjax.vmap(lambda a, b: jnp.dot(a, b), in_axes=(0, None)), (x, f32(3))),
        ("vmap_grad", mjax.vmap(mjax.grad(lambda v: jnp.sum(jnp.exp(v)))), (x,)),
        ("scan", _scan_cumsum, (f32(5),)),
        ("grad_scan", mjax.grad(lambda v: _scan_cumsum(v)[1].sum()), (f32(5),)),
        ("cond", lambda p, v: lax.cond(p, jnp.sin, jnp.cos, v), (True, f32(3))),
        ("grad_cond", mjax.grad(lambda v: lax.cond(v.sum() > 0, jnp.sin, jnp.cos, v).sum()),
         (f32(3),)),
        ("switch", _switch, (np.int32(1), f32(3))),
        ("vmap_switch", mjax.vmap(_switch), (np.array([0, 2], np.int32), f32(2, 3))),
        ("while", _while, (f32(3),)),
        ("fori", lambda v: lax.fori_loop(0, 3, lambda i, c: c * v + i, v), (f32(3),)),
        ("custom_vjp", mjax.grad(lambda v: _clip_grad(v).sum()), (f32(3),)),
        ("custom_jvp", mjax.grad(lambda v: _softplus(v).sum()), (f32(3),)),
        ("checkpoint", mjax.grad(lambda v: mjax.checkpoint(lambda u: jnp.sin(jnp.sin(u)))(v)
                                 .sum()), (f32(3),)),
        ("checkify", checkify.checkify(_checked, errors=checkify.all_checks), (f32(3),)),
        ("checkify_vmap", checkify.checkify(mjax.vmap(_checked)), (f32(2, 3),)),
        ("sharding", _sharded, (f32(4),)),
        ("in_sharded", _in_sharded, (f32(4, 3),)),
        ("random", lambda k: mjax.random.normal(mjax.random.fold_in(k, 3), (3,)),
         (mjax.random.key(0),)),
        ("indexing", lambda v, i: v.at[i].add(v[::-1][i]) + v[1:].sum(),
         (f32(4), np.array([0, 2], np.int32))),
        ("sort_cumsum", lambda v: jnp.cumsum(jnp.sort(v)) + jnp.argmax(v), (f32(5),)),
        ("softmax_grad", mjax.grad(lambda v: mjax.nn.log_softmax(v)[0]), (f32(4),)),
        ("pool_grad", mjax.grad(lambda v: _pool(v).sum()), (f32(1, 4, 4, 1),)),
        ("conv", _conv, (f32(1, 4, 4, 2), f32(3, 3, 2, 2))),
        ("linalg", lambda a: jnp.linalg.cholesky(a @ a.T + 3 * jnp.eye(3)), (f32(3, 3),)),
        ("callback", lambda v: mjax.pure_callback(np.sin, mjax.ShapeDtypeStruct(v.shape,
                                                                                  v.dtype), v),
         (f32(3),)),
        ("jacfwd_while", mjax.jacfwd(_while), (f32(2),)),
        ("vmap_scan", mjax.vmap(_scan_cumsum), (f32(2, 5),)),
        ("shard_map", _shard_mapped, (f32(4),)),
    ]


def jitted(name, fn):
    """`fn` under jit; the in_sharded program has an argument sharding."""
    if name == "in_sharded":
        return mjax.jit(fn, in_shardings=mjax.NamedSharding(_mesh(), mjax.P("d")))
    return mjax.jit(fn)


def traced_texts() -> list[tuple[str, str]]:
    """(name, jaxpr-dialect text) of each program; every third keeps its source
    locations (errors then point at this file)."""
    return [(name, jitted(name, fn).trace(*args).as_text(debug_info=i % 3 == 0))
            for i, (name, fn, args) in enumerate(programs())]
