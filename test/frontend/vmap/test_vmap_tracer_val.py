"""`.val` and `.batch_dim` of values in a vmap body (JAX's VmapTracer attributes, which
JAX's "Automatic vectorization" tutorial reads), compared with JAX: the batched value
where JAX knows it (eager vmap, also inside eager grad for values it does not perturb),
the batch axis where JAX's batching rules put it, a tracer of the batched type where JAX's
is one (under jit, nested vmap, a differentiated value), and an AttributeError for values
that are not batched."""
from __future__ import annotations

import contextlib
import io

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp


def _attrs(v):
    """(val, batch_dim), or the error's type for each."""
    out = []
    for name in ("val", "batch_dim"):
        try:
            x = getattr(v, name)
        except AttributeError:
            out.append(AttributeError)
            continue
        out.append(x if isinstance(x, int) or not hasattr(x, "aval") or
                   type(x).__name__.endswith("Tracer") else np.asarray(x))
    return out


def _seen(lib, np_, run):
    """What the vmap bodies of `run` saw, in order (see `look`), and what it returned."""
    seen = []

    def look(v):
        val, dim = _attrs(v)
        if isinstance(val, np.ndarray):
            seen.append(("array", val.dtype, val, dim))
        elif val is AttributeError:
            seen.append(("missing", dim))
        else:       # (a tracer of the trace around the vmap: JAX prints its type)
            seen.append(("tracer", repr(val), dim))
        return v
    out = run(lib, np_, look)
    return seen, None if out is None else np.asarray(out)


def _same(a, b):
    (sa, oa), (sb, ob) = a, b
    assert len(sa) == len(sb), (sa, sb)
    for x, y in zip(sa, sb):
        assert x[0] == y[0] and len(x) == len(y), (x, y)
        for p, q in zip(x[1:], y[1:]):
            if isinstance(p, np.ndarray):
                np.testing.assert_allclose(p, q, rtol=1e-6)
                assert p.shape == q.shape
            else:
                assert p == q, (x, y)
    if oa is not None or ob is not None:
        np.testing.assert_allclose(oa, ob, rtol=1e-6)


X23 = np.arange(6.0, dtype=np.float32).reshape(2, 3)
X234 = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4) - 7

CASES = {
    "argument": lambda lib, np_, look: lib.vmap(look)(np_.arange(3.0)),
    "ops": lambda lib, np_, look: lib.vmap(lambda x: look(x * 2 + 1))(np_.arange(3.0)),
    "in_axes_1": lambda lib, np_, look: lib.vmap(look, in_axes=1)(X23),
    "negative_axis": lambda lib, np_, look: lib.vmap(lambda x: look(x > 1), in_axes=-1)(X23),
    "int": lambda lib, np_, look: lib.vmap(lambda x: look(x * 2))(np_.arange(3)),
    "complex": lambda lib, np_, look: lib.vmap(lambda x: look(x + 1.5j))(np_.arange(2.0)),
    # batch dims of JAX's rules: elementwise keeps an agreed one, reductions and
    # dot_general keep it in place, transposes and reshapes move it in front
    "rules": lambda lib, np_, look: [
        lib.vmap(lambda x: [look(f(x)) for f in (
            lambda x: x * 2, np_.sin, lambda x: x + x, lambda x: x * np_.ones((3, 4)),
            lambda x: x.sum(0), lambda x: x.sum(1), lambda x: x.sum(), lambda x: x.max(1),
            lambda x: x.argmax(1), lambda x: np_.cumsum(x, 0), lambda x: np_.sort(x, 0),
            lambda x: x[::-1], lambda x: x.T, lambda x: x.reshape(12), lambda x: x[None],
            lambda x: x[1:], lambda x: np_.pad(x, 1), lambda x: x @ np_.ones((4, 2)),
            lambda x: x.astype(np_.int32), lambda x: np_.clip(x, 0, 1),
            lambda x: np_.concatenate([x, x]), lambda x: x.mean(1))][0],
            in_axes=ax)(np_.asarray(np.moveaxis(X234, 0, ax)))
        for ax in (0, 1, 2)][-1],
    "dot_rhs": lambda lib, np_, look: lib.vmap(lambda x, y: look(x @ y), in_axes=(None, 1))(
        np_.ones((4, 3)), np_.ones((3, 5, 2))),
    "two_axes": lambda lib, np_, look: lib.vmap(lambda x, y: look(x + y), in_axes=(1, 0))(
        X23, np_.ones((3, 2))),
    "unmapped_argument": lambda lib, np_, look: lib.vmap(
        lambda x, y: (look(y + 1), look(x + y))[1], in_axes=(0, None))(
        np_.arange(3.0), np_.ones(3)),
    "control_flow": lambda lib, np_, look: lib.vmap(lambda x: look(
        lib.lax.cond(x > 1, lambda: x * 2, lambda: x - 1) +
        lib.lax.fori_loop(0, 3, lambda i, c: c + x, 0.0)))(np_.arange(3.0)),
    "nested_jit": lambda lib, np_, look: lib.vmap(
        lambda x: look(lib.jit(lambda y: y * 2)(x)), in_axes=1)(X23),
    "collectives": lambda lib, np_, look: lib.vmap(lambda x: (
        look(lib.lax.psum(x, "i")), look(lib.lax.psum(x, "i") * x),
        look(lib.lax.axis_index("i")), look(lib.lax.pmax(x, "i") + x))[1],
        axis_name="i", in_axes=1)(X23),
    "pytree_in_axes": lambda lib, np_, look: lib.vmap(
        lambda d: look(d["a"] @ d["b"]), in_axes=({"a": 1, "b": None},))(
        {"a": np_.ones((4, 5)), "b": np_.arange(4.0)}),
    "used_in_body": lambda lib, np_, look: lib.vmap(
        lambda x: look(x).val.sum() + x)(np_.arange(3.0)),
    # where JAX's val is a tracer: under jit, in a nested vmap, inside eager grad for a
    # value depending on the differentiated input (and not for one that does not)
    "jit": lambda lib, np_, look: lib.jit(lib.vmap(lambda x: look(np_.sin(x))))(
        np_.arange(3.0)),
    "jit_closure": lambda lib, np_, look: lib.jit(
        lambda a: lib.vmap(lambda x: look(x * a))(np_.arange(4.0)))(2.0),
    "nested_vmap": lambda lib, np_, look: lib.vmap(lib.vmap(
        lambda x: look(look(x).val)), in_axes=1)(X234),
    "in_grad": lambda lib, np_, look: lib.grad(lambda w: lib.vmap(
        lambda x: (look(x * x), look(x * w))[1])(np_.arange(3.0)).sum())(2.0),
    "in_scan": lambda lib, np_, look: lib.lax.scan(
        lambda c, x: (c + lib.vmap(lambda y: look(y * c))(x).sum(), None),
        1.0, np_.ones((2, 3)))[0],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_val_and_batch_dim_match_jax(name):
    run = CASES[name]
    _same(_seen(mjax, jnp, run), _seen(jax, jjnp, run))


def _printed(lib, np_):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        lib.vmap(lambda x: print(x.val))(np_.arange(3.0))      # (the tutorial's cell)
        lib.vmap(lambda x: print((x * 2 + 1).val), in_axes=1)(np_.asarray(X23))
    return out.getvalue()


def test_tutorial_cell_prints_as_jax():
    assert _printed(mjax, jnp) == _printed(jax, jjnp)


def test_unbatched_value_has_no_val():
    with pytest.raises(AttributeError, match="not batched"):
        mjax.vmap(lambda x, y: (y * 2).val, in_axes=(0, None))(jnp.ones(3), jnp.ones(2))
    with pytest.raises(AttributeError, match="no attribute 'val'"):   # (not a vmap body)
        mjax.jit(lambda x: x.val)(jnp.ones(3))
    with pytest.raises(AttributeError, match="no attribute 'batch_dim'"):
        mjax.grad(lambda x: x.batch_dim)(1.0)


def test_user_tracer_class_keeps_its_own_val():
    class MyTracer(mjax.core.Tracer):
        def __init__(self, trace, val):
            self._trace_ = trace
            self.val = val
    assert MyTracer(None, 3).val == 3


def test_eager_calls_reuse_their_programs():
    from mjax.ad import concrete

    def f(x):
        y = jnp.sin(x) * 2
        assert y.val.shape == (3,)
        return y + 1
    g = mjax.vmap(f)
    g(jnp.arange(3.0))
    n = len(concrete._GROUP_CACHE)
    for _ in range(3):
        np.testing.assert_allclose(g(jnp.arange(3.0)), np.sin(np.arange(3.0)) * 2 + 1,
                                   rtol=1e-6)
    assert len(concrete._GROUP_CACHE) == n
