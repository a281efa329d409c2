"""A jit cache miss flattens its arguments once: the leaves, treedef and avals jit's call
computed go on to the trace (jit_traces.trace, staging.trace_function) instead of being
computed again there (issue 56)."""
import numpy as np

import mjax
import mjax.numpy as jnp
from mjax.base import trace_trees


def _input_flattens(monkeypatch, call, arg):
    """How many times `call()` flattens a pytree holding `arg` (the call's argument)."""
    seen = []
    real = trace_trees.tree_flatten

    def counting(tree, *rest, **kw):
        if _holds(tree, arg):
            seen.append(1)
        return real(tree, *rest, **kw)
    monkeypatch.setattr(trace_trees, "tree_flatten", counting)
    call()
    return len(seen)


def _holds(tree, arg) -> bool:
    if tree is arg:
        return True
    if isinstance(tree, (tuple, list)):
        return any(_holds(t, arg) for t in tree)
    if isinstance(tree, dict):
        return any(_holds(t, arg) for t in tree.values())
    return False


def test_a_miss_flattens_the_arguments_once(monkeypatch):
    x = {"a": jnp.ones(3), "b": (jnp.zeros(2), jnp.ones(()))}
    f = mjax.jit(lambda t: t["a"].sum() + t["b"][0].sum() * t["b"][1])
    assert _input_flattens(monkeypatch, lambda: f(x), x) == 1
    np.testing.assert_allclose(f(x), 3.0)
    y = {"a": jnp.ones(4), "b": (jnp.zeros(2), jnp.ones(()))}     # (another miss)
    assert _input_flattens(monkeypatch, lambda: f(y), y) == 1
    np.testing.assert_allclose(f(y), 4.0)


def test_a_miss_with_static_and_keyword_arguments_flattens_once(monkeypatch):
    x = [jnp.arange(3.0), jnp.ones(3)]
    f = mjax.jit(lambda xs, n, scale=1.0: (xs[0] * n + xs[1]) * scale, static_argnums=1)
    assert _input_flattens(monkeypatch, lambda: f(x, 2, scale=3.0), x) == 1
    np.testing.assert_allclose(f(x, 2, scale=3.0), (np.arange(3.0) * 2 + 1) * 3)
