"""Arrays on meshes of one device, as JAX's: results of eager ops and jit calls on them
keep a NamedSharding of the mesh (its type's spec on Explicit axes; on Auto axes the
first argument's sharding), are committed, and mix with uncommitted arrays and with
arrays committed to the same device; other devices are JAX's errors. In a fresh process
per library (8 CPU devices), compared line by line with jax."""
from __future__ import annotations

import functools
import os
import subprocess
import sys

import jax

import mjax
from mjax.jit.jitted import Jitted

PROGRAM = r'''
import os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
if sys.argv[1] == "mjax":
    import mjax
    mjax.alias_jax()
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

d = jax.devices()


def show(name, f):
    try:
        v = f()
        for o in (v if isinstance(v, tuple) else (v,)):
            print(name, o.sharding, o.committed, o.dtype, o.shape, np.asarray(o).tolist())
    except ValueError as e:
        print(name, "ValueError", str(e))


for kind in (AxisType.Explicit, AxisType.Auto):
    print("---", kind)
    m0 = jax.make_mesh((1,), ("x",), (kind,), devices=d[:1])
    m1 = jax.make_mesh((1,), ("x",), (kind,), devices=d[1:2])
    a = jax.device_put(1.0, NamedSharding(m0, P()))
    b = jax.device_put(2.0, NamedSharding(m1, P()))
    v1 = jax.device_put(np.arange(4.0), NamedSharding(m1, P("x")))
    w1 = jax.device_put(np.arange(4.0), NamedSharding(m1, P()))
    m2 = jax.device_put(np.ones((4, 3)), NamedSharding(m1, P("x", None)))
    c = jnp.float32(3.0)
    sd1 = jax.device_put(np.arange(4.0), d[1])
    sd0 = jax.device_put(np.arange(4.0), d[0])
    show("a", lambda: a)
    for i in range(2):      # (again: the cached paths)
        show("a + c", lambda: a + c)
        show("c + a", lambda: c + a)
        show("sin v1", lambda: jnp.sin(v1))
        show("v1 * 2", lambda: v1 * 2)
        show("jit sin v1", lambda: jax.jit(jnp.sin)(v1))
    show("a + b", lambda: a + b)
    show("v1 + numpy", lambda: v1 + np.ones(4))
    show("numpy + v1", lambda: np.ones(4) + v1)
    show("v1 + uncommitted", lambda: v1 + jnp.arange(4.0))
    show("w1 + 1", lambda: w1 + 1)
    show("sum v1", lambda: jnp.sum(v1))
    show("v1.sum(0)", lambda: v1.sum(0))
    show("reshape", lambda: v1.reshape(2, 2))
    show("transpose", lambda: m2.T)
    show("astype", lambda: v1.astype(jnp.int32))
    show("where", lambda: jnp.where(v1 > 1, v1, 0.0))
    show("zeros_like", lambda: jnp.zeros_like(v1))
    show("argmax", lambda: jnp.argmax(v1))
    show("grad", lambda: jax.grad(lambda x: jnp.sum(x * x))(v1))
    show("sd1 + v1", lambda: sd1 + v1)
    show("v1 + sd1", lambda: v1 + sd1)
    show("v1 + sd0", lambda: v1 + sd0)
    show("jit const", lambda: jax.jit(lambda: jnp.ones(3))())
    show("jit two results", lambda: jax.jit(lambda x, y: (x + y[:, 0], y.sum(0),
                                                         x.reshape(2, 2)))(w1, m2))
    show("jit, first argument 2-D", lambda: jax.jit(lambda y, x: (x + y[:, 0], y * 2,
                                                                 x.reshape(2, 2)))(m2, w1))
    show("jit numpy, v1", lambda: jax.jit(lambda x, y: x + y)(np.ones(4), v1))
    show("jit sd1, v1", lambda: jax.jit(lambda x, y: x + y)(sd1, v1))
    show("jit sd0, v1", lambda: jax.jit(lambda x, y: x + y)(sd0, v1))
    show("jit out_shardings", lambda: jax.jit(
        lambda x: x * 2, out_shardings=NamedSharding(m1, P()))(jnp.ones(4)))
    show("device_put to the device", lambda: jax.device_put(v1, d[1]))
    show("device_put to another device", lambda: jax.device_put(v1, d[2]))
    show("device_put, no device", lambda: jax.device_put(v1))
    show("device_put sd1 to m1", lambda: jax.device_put(sd1, NamedSharding(m1, P())))
    with jax.set_mesh(m1):
        show("set_mesh: ones", lambda: jnp.ones(3))
        show("set_mesh: arange", lambda: jnp.arange(3.0))
        show("set_mesh: c + 1", lambda: c + 1)
        show("set_mesh: sin v1", lambda: jnp.sin(v1))
        show("set_mesh: sum v1", lambda: jnp.sum(v1))
        show("set_mesh: jit", lambda: jax.jit(lambda x: x + 1)(jnp.ones(3)))
        show("set_mesh: jit v1", lambda: jax.jit(lambda x: x + 1)(v1))
        show("set_mesh: device_put P", lambda: jax.device_put(np.ones(3), P()))
        show("set_mesh: a + b", lambda: a + b)
        show("set_mesh: sd0 + 1", lambda: sd0 + 1)
    with jax.set_mesh(m0):
        show("set_mesh m0: v1 + 1", lambda: v1 + 1)

print("--- Mesh(...), Auto by default")
mesh = Mesh(np.array(d[2:3]), ("x",))
v = jax.device_put(np.arange(4.0), NamedSharding(mesh, P("x")))
sd = jax.device_put(np.arange(4.0), d[2])
f = jax.jit(lambda x, y: x + y)
for name, args in [("v, numpy", (v, np.ones(4))), ("numpy, v", (np.ones(4), v)),
                   ("sd, v", (sd, v)), ("v, sd", (v, sd)), ("1.0, v", (1.0, v))]:
    show(name, lambda: f(*args))
show("sd + v", lambda: sd + v)
with mesh:      # (the legacy context of one device places nothing)
    show("with mesh: ones", lambda: jnp.ones(3))
    show("with mesh: jit", lambda: jax.jit(lambda x: x + 1)(np.ones(3)))
u = jax.device_put(np.arange(3.0), NamedSharding(mesh, P()))


def traced(x):
    print("tracing", jax.typeof(x))
    return x * 2


jax.jit(traced)(jnp.arange(4.0))       # (a trace of another type is not reused)
explicit = jax.make_mesh((1,), ("x",), devices=d[3:4])
show("traced again", lambda: jax.jit(traced)(
    jax.device_put(np.arange(4.0), NamedSharding(explicit, P("x")))))
print("donated in place", jax.device_put(u, d[2], donate=True).sharding, u.is_deleted())
# (two pmaps' results, each over its own one-device mesh: compared as JAX does)
pa = jax.pmap(lambda x: x + 1)(jnp.ones((1, 2)))
pb = jax.pmap(lambda x: x * 2)(jnp.ones((1, 2)))
print("pmap results compared", np.asarray(pa == pb).tolist(), np.asarray(jax.jit(
    lambda a, b: a + b)(pa, pb)).tolist())
show("in_shardings None", lambda: jax.jit(lambda x: x * 2, in_shardings=(None,),
                                          out_shardings=None)(jnp.ones((2, 2))))
print("typeof of it", jax.typeof(jax.jit(lambda x: x * 2, in_shardings=(None,))(
    jnp.ones(2))).sharding)
print("keys' sharding", jax.random.split(jax.random.key(0), 4).sharding)
'''


def _run(lib: str) -> list[str]:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", PROGRAM, lib], capture_output=True,
                         text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.splitlines()


def test_one_device_meshes_as_jax():
    theirs, mine = _run("jax"), _run("mjax")
    assert len(mine) == len(theirs), (len(mine), len(theirs))
    for t, m in zip(theirs, mine):
        assert m == t, f"\njax:  {t}\nmjax: {m}"


def test_jit_repr_and_class_name_as_jax():
    """repr(jit(f)) is JAX's `<PjitFunction of ...>` (for functions, partials, lambdas
    and jits of jits) and the class is named PjitFunction (chex's is_traceable looks for
    that name); mjax's code still reaches the class as mjax.jit.jitted.Jitted."""
    def f(x):
        return x

    for make in (lambda lib: lib.jit(f), lambda lib: lib.jit(functools.partial(f)),
                 lambda lib: lib.jit(len), lambda lib: lib.jit(lib.jit(f))):
        theirs, mine = make(jax), make(mjax)
        assert repr(mine) == repr(theirs)
        assert str(mine) == str(theirs)
        assert type(mine).__name__ == type(theirs).__name__ == "PjitFunction"
        assert type(mine).__qualname__ == type(theirs).__qualname__
        assert isinstance(mine, Jitted)
    lam = lambda x: x  # noqa: E731
    assert repr(mjax.jit(lam)) == f"<PjitFunction of {lam!r}>" == repr(jax.jit(lam))


def test_jitted_method_is_a_bound_method_as_jax():
    def scaled(self, x):
        return x * 2

    for lib in (jax, mjax):
        cls = type("C", (), {"jm": functools.partial(lib.jit, static_argnums=0)(scaled),
                             "__hash__": lambda self: 1, "__eq__": lambda self, o: True})
        obj = cls()
        bound = obj.jm
        assert type(bound).__name__ == "method" and bound.__self__ is obj
        assert type(bound.__func__).__name__ == "PjitFunction"
        assert int(bound(3)) == 6
