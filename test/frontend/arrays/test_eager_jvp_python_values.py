"""An eager (un-jitted) jvp returns what JAX's returns: a custom_jvp rule's Python
floats (and NumPy values, and arrays) as the rule returned them when the function is
called on the jvp's own inputs, arguments passed on unchanged and constants as they are;
values computed by staged ops are arrays (mjax/ad/eager_jvp.py). Compared with real jax:
types, dtypes, weak types and values, the number of times the rule runs, and repeated
calls with other values (the program depends on them: not cached)."""
from functools import partial

import jax
import jax.extend  # noqa: F401  (jax.extend.core, below)
import jax.interpreters.ad  # noqa: F401
import jax.interpreters.mlir  # noqa: F401
import numpy as np

import mjax


def _described(v):
    return (type(v).__name__.replace("ArrayImpl", "Array"), str(np.asarray(v).dtype),
            getattr(v, "weak_type", None), np.asarray(v).tolist())


def _cases(lib):
    jnp = lib.numpy
    calls = []

    @lib.custom_jvp
    def f(x):
        return x ** 2 + 1

    @f.defjvp
    def f_jvp(p, t):
        calls.append("f")
        (x,), (tx,) = p, t
        return f(x), tx ** 2

    @lib.custom_jvp
    def const(x):
        return x ** 2 + 1

    @const.defjvp
    def const_jvp(p, t):
        return 7.0, 1.0

    @lib.custom_jvp
    def strong(x):
        return x ** 2 + 1

    @strong.defjvp
    def strong_jvp(p, t):
        (x,), (tx,) = p, t
        return strong(x), jnp.float32(1.0) * tx

    @partial(lib.custom_jvp, nondiff_argnums=(0,))
    def call(fn, x, y):     # (equinox's filter_custom_jvp pattern)
        return fn(x, y)

    @call.defjvp
    def call_jvp(fn, p, t):
        (x, y), (tx, ty) = p, t
        return call(fn, x, y), tx ** 2 + ty

    fn = lambda a, b: a ** 2 + b    # noqa: E731
    f32 = np.float32
    cases = [
        lib.jvp(f, (2.0,), (3.0,)),
        lib.jvp(f, (4.0,), (1.0,)),       # (other values: traced again)
        lib.jvp(f, (jnp.float32(2.0),), (jnp.float32(3.0),)),
        lib.jvp(f, (f32(2.0),), (f32(3.0),)),
        lib.jit(lambda x, t: lib.jvp(f, (x,), (t,)))(2.0, 3.0),
        lib.jvp(lambda x: f(x) * 1.0, (2.0,), (3.0,)),
        lib.jvp(lambda x: f(x * 1.0), (2.0,), (3.0,)),
        lib.jvp(lambda a, b: f(a) + b, (2.0, 1.0), (3.0, 1.0)),
        lib.jvp(lambda a, b: (f(a), b), (2.0, 1.0), (3.0, 1.0)),
        lib.jvp(const, (2.0,), (3.0,)),
        lib.vmap(lambda x, t: lib.jvp(const, (x,), (t,)))(jnp.ones(2), jnp.ones(2)),
        lib.jvp(strong, (2.0,), (3.0,)),
        lib.jvp(strong, (f32(2.0),), (f32(3.0),)),
        lib.jvp(lambda x, y: call(fn, x, y), (2.0, 1.5), (3.0, 4.0)),
        lib.jvp(lambda x, y: call(fn, x, y), (3.0, 0.5), (1.0, 2.0)),
        lib.jvp(lambda x: x, (2.0,), (3.0,)),
        lib.jvp(lambda x: x ** 2 + 1, (2.0,), (3.0,)),
        lib.jvp(lambda x: 5.0, (2.0,), (3.0,)),
        lib.jvp(lambda x: (f(x), x), (2.0,), (3.0,), has_aux=True),
    ]
    return cases, len(calls)


def test_rule_on_arrays_gives_arrays():
    # (mjax's departure: the rule runs on arrays staged, so what it returns comes back as
    # arrays; JAX returns the rule's Python floats as they are)
    @mjax.custom_jvp
    def const(x):
        return x ** 2 + 1
    const.defjvp(lambda p, t: (7.0, 1.0))
    y, ty = mjax.jvp(const, (mjax.numpy.float32(2.0),), (mjax.numpy.float32(3.0),))
    assert (float(y), float(ty)) == (7.0, 1.0) and isinstance(y, mjax.Array)


def test_eager_jvp_values_as_jax():
    mine, n_mine = _cases(mjax)
    theirs, n_theirs = _cases(jax)
    assert len(mine) == len(theirs)
    for k, (m, t) in enumerate(zip(mine, theirs)):
        m_leaves, t_leaves = jax.tree_util.tree_leaves(m), jax.tree_util.tree_leaves(t)
        assert [_described(v) for v in m_leaves] == [_described(v) for v in t_leaves], k
    assert n_mine == n_theirs      # (the rule runs once per jvp, as JAX runs it)


def _primitive_case(lib):
    """A user primitive (jax.extend.core.Primitive) whose JVP rule passes its Python
    values on (equinox's nondifferentiable_backward): an eager jvp returns them so; one
    whose rule raises raises at once, as JAX's eager jvp does."""
    core, ad, mlir = lib.extend.core, lib.interpreters.ad, lib.interpreters.mlir
    prim = core.Primitive(f"passes_on_{lib.__name__}")
    prim.def_impl(lambda x, *, k: x)
    prim.def_abstract_eval(lambda x, *, k: x)
    mlir.register_lowering(prim, mlir.lower_fun(lambda x, *, k: x, multiple_results=False))
    calls = []

    def rule(primals, tangents, *, k):
        calls.append(k)
        return primals[0], tangents[0] * k
    ad.primitive_jvps[prim] = rule
    refuses = core.Primitive(f"refuses_{lib.__name__}")
    refuses.def_impl(lambda x: x)
    refuses.def_abstract_eval(lambda x: x)

    def refuse(primals, tangents):
        raise RuntimeError("no derivative here")
    ad.primitive_jvps[refuses] = refuse
    out = lib.jvp(lambda x: prim.bind(x, k=3.0), (2.0,), (1.5,))
    try:
        lib.jvp(lambda x: refuses.bind(x), (2.0,), (1.0,))
        refused = None
    except RuntimeError as e:
        refused = str(e)
    return [_described(v) for v in out], len(calls) > 0, refused


def test_user_primitive_jvp_rule_values_as_jax():
    assert _primitive_case(mjax) == _primitive_case(jax)
