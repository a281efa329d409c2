"""jit(donate_argnums=, donate_argnames=): donated inputs alias outputs, are deleted after
the call, and using them raises JAX's error; unusable donations warn as JAX does."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import mjax
import mjax.numpy as jnp


def test_donated_buffer_is_reused_and_deleted():
    f = mjax.jit(lambda x, y: x * 2 + y, donate_argnums=0)
    x, y = jnp.arange(1000.0), jnp.ones(1000)
    np.asarray(x)                          # a cached host copy must not survive donation
    ptr = x.unsafe_buffer_pointer()
    z = f(x, y)
    assert x.is_deleted() and not y.is_deleted()
    assert z.unsafe_buffer_pointer() == ptr
    np.testing.assert_array_equal(np.asarray(z), np.arange(1000.0) * 2 + 1)
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[1000\]"):
        np.asarray(x)
    # A call JAX has compiled before fails in jaxlib's Execute() (as under JAX).
    with pytest.raises(ValueError, match="Buffer has been deleted or donated"):
        f(x, y)


def test_lowered_module_marks_aliasing():
    f = mjax.jit(lambda x, y: (x + y, y.sum()), donate_argnums=(0,))
    x = jnp.ones(4)
    f(x, jnp.ones(4))
    assert x.is_deleted()


def test_donate_argnames_and_pytrees():
    f = mjax.jit(lambda params, *, state: (params["w"] * 2, state + 1),
                 donate_argnames="state")
    params, state = {"w": jnp.ones(3)}, jnp.zeros(3)
    w2, s2 = f(params, state=state)
    assert state.is_deleted() and not params["w"].is_deleted()
    np.testing.assert_array_equal(np.asarray(s2), np.ones(3))
    g = mjax.jit(lambda tree: mjax.tree_util.tree_map(lambda a: a + 1, tree),
                 donate_argnums=0)
    tree = {"a": jnp.ones(2), "b": jnp.zeros(5)}
    out = g(tree)
    assert all(leaf.is_deleted() for leaf in mjax.tree_util.tree_leaves(tree))
    np.testing.assert_array_equal(np.asarray(out["b"]), np.ones(5))


def test_unusable_donation_warns_like_jax():
    f = mjax.jit(lambda x: x.sum(), donate_argnums=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f(jnp.ones(3))
    messages = [str(w.message) for w in caught]
    assert any("Some donated buffers were not usable: ShapedArray(float32[3])" in m
               for m in messages), messages


def test_static_and_donated_is_an_error():
    with pytest.raises(ValueError, match="static arguments cannot be donated"):
        mjax.jit(lambda a: a, static_argnums=0, donate_argnums=0)
    with pytest.raises(ValueError, match="invalid argnames {'b'} in donate_argnames"):
        mjax.jit(lambda a: a, donate_argnames="b")


def test_without_donation_inputs_survive():
    f = mjax.jit(lambda x: x + 1)
    x = jnp.ones(3)
    f(x)
    assert not x.is_deleted()


_N = 13


def _uses_of_a_donated_array(J, np_):
    """name -> a function of a donated array (run after the donation)."""
    cached = J.jit(lambda a, b: a * b, donate_argnums=1)
    cached(np_.ones(_N), np_.ones(_N))
    return {"eager add": lambda y: y + 1, "sin": np_.sin, "sum": np_.sum,
            "index": lambda y: y[0], "asarray": np.asarray, "repr": repr,
            "grad": lambda y: J.grad(lambda a: (a ** 2).sum())(y),
            "fresh jit": lambda y: J.jit(lambda a: a * 2)(y),
            "cached jit, donated again": lambda y: cached(np_.ones(_N), y),
            "cached jit, not donated": lambda y: cached(y, np_.ones(_N))}


@pytest.mark.parametrize("use", ["eager add", "sin", "sum", "index", "asarray", "repr",
                                 "grad", "fresh jit", "cached jit, donated again",
                                 "cached jit, not donated"])
def test_using_a_donated_array_raises_jax_error(use):
    # JAX: the array's RuntimeError, except for a call its jit cache holds: jaxlib's
    # Execute() raises ValueError there (the buffer donation tutorial's case).
    import jax
    import jax.numpy as jjnp

    # (A length no other test uses: which class JAX raises depends on whether its jit
    # cache already holds the call, i.e. on what ran before in this process.)
    def error_of(J, np_):
        fn = _uses_of_a_donated_array(J, np_)[use]
        y = np_.ones(_N)
        J.jit(lambda a: a + 1, donate_argnums=0)(y)
        with pytest.raises(Exception) as info:
            fn(y)
        return info.value
    mine, theirs = error_of(mjax, jnp), error_of(jax, jjnp)
    assert type(mine) is type(theirs)
    assert ("Buffer has been deleted or donated" in str(mine)) == (
        "Buffer has been deleted or donated" in str(theirs))


def test_a_failed_first_call_caches_nothing():
    """A jnp function used before, given a donated array of a shape it has not seen: JAX's
    first-call RuntimeError, at the next call too. (mjax's eager C path retries a failed
    call in Python, which found the entry the failed call had cached, and raised
    Execute()'s ValueError.)"""
    import jax
    import jax.numpy as jjnp
    for J, np_ in ((mjax, jnp), (jax, jjnp)):
        np_.sum(np_.ones(5))
        np_.sum(np_.ones(5))
        y = np_.ones(1013)
        J.jit(lambda a: a + 1, donate_argnums=0)(y)
        for _ in range(2):
            with pytest.raises(RuntimeError, match=r"deleted with shape=float32\[1013\]"):
                np_.sum(y)


def test_cached_donating_calls_take_the_fast_path():
    # A loop feeding each result back donated: after the first calls, no Python of
    # jitted.py's general path runs (the fast path, C or Python, serves the call), each
    # input is consumed and the numbers stay right.
    import sys
    sys.path.insert(0, __file__.rsplit("/", 2)[0])
    from frontend_util import python_calls
    f = mjax.jit(lambda x, y: x * 2 + y, donate_argnums=0)
    x, y = jnp.ones(5), jnp.arange(5.0)
    want = np.ones(5)
    for _ in range(3):
        old, x = x, f(x, y)
        want = want * 2 + np.arange(5.0)
        assert old.is_deleted() and not y.is_deleted()
    old = x
    seen = python_calls(lambda: f(old, y), lambda fn: fn.endswith("jitted.py"))
    assert "_call" not in seen, seen
    assert old.is_deleted()
    x = f(jnp.asarray(want * 2 + np.arange(5.0)), y)   # (a fresh input, same entry)
    np.testing.assert_array_equal(np.asarray(x), (want * 2 + np.arange(5.0)) * 2 +
                                  np.arange(5.0))
    with pytest.raises(ValueError, match="Buffer has been deleted or donated"):
        f(old, y)


def test_donated_python_scalars_get_a_buffer_per_call():
    # The fast path keeps one device buffer per Python scalar value for programs that
    # donate nothing; a donating program consumes its input, so each call needs its own.
    f = mjax.jit(lambda s: s + 1, donate_argnums=0)
    g = mjax.jit(lambda s, t: s * t, donate_argnums=(0, 1))
    for i in range(4):
        assert float(f(2.0)) == 3.0 and int(f(5)) == 6
        assert float(f(np.float32(i))) == i + 1
        assert float(g(2.0, 3.0)) == 6.0
        out = f(f(2.0))                        # (a weakly typed Array: the same entry)
        assert float(out) == 4.0 and out.weak_type
    h = mjax.jit(lambda s: s + 1)             # (a non-donating program of the same value)
    assert float(h(2.0)) == 3.0 and float(h(2.0)) == 3.0


def test_donating_sharded_arrays():
    # (the lowering aliased donated inputs by rebuilding each argument's attributes: a
    # sharded argument has some, which it could not read)
    mesh = mjax.make_mesh((4,), ("x",), devices=mjax.devices()[:4])
    rows = mjax.sharding.NamedSharding(mesh, mjax.sharding.PartitionSpec("x"))
    for f in (mjax.jit(lambda a, b: (a + b, b * 2), donate_argnums=(0,)),
              mjax.jit(lambda a, b: (a + b, b * 2), donate_argnums=(0,), in_shardings=rows,
                       out_shardings=rows)):
        x = mjax.device_put(jnp.arange(8.0), rows)
        y = mjax.device_put(jnp.ones(8), rows)
        s, t = f(x, y)
        assert x.is_deleted() and not y.is_deleted()
        np.testing.assert_array_equal(s, np.arange(8.0) + 1)
        np.testing.assert_array_equal(t, np.full(8, 2.0))
        assert s.sharding == rows
