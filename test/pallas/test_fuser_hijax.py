"""A hijax VJPHiPrimitive in a fused function against JAX's (its call_hi_primitive rules):
pull_block_spec, the kernel function and push_block_spec use the primitive's own
pull_block_spec_rule, block_eval_rule and push_block_spec_rule methods (the kernel
block is what block_eval_rule computes, not the primitive's expand), and a primitive
without them is an AttributeError naming the missing method, as JAX's."""
import numpy as np
import pytest

import jax  # noqa: F401  (the oracle; fuser_programs imports it per case)
from fuser_programs import namespace

X = np.arange(16 * 256, dtype=np.float32).reshape(16, 256) / 1000


def _primitives(lib):
    ns = namespace(lib)
    if lib == "jax":
        from jax.experimental.hijax import VJPHiPrimitive
    else:
        from mjax.experimental.hijax import VJPHiPrimitive
    calls = []

    class Square(VJPHiPrimitive):
        def __init__(self, aval):
            self.in_avals, self.out_aval, self.params = (aval,), aval, {}
            super().__init__()

        def expand(self, x):
            return x * x

        def jvp(self, primals, tangents):
            (x,), (t,) = primals, tangents
            return self(x), 2 * x * t

    class SquareWithRules(Square):
        def pull_block_spec_rule(self, ctx, out_transforms):
            calls.append(("pull", tuple(out_transforms[0].block_shape)))
            return out_transforms

        def block_eval_rule(self, ctx, x):
            calls.append(("eval", tuple(ctx.out_block_specs[0].block_shape)))
            return x * x + 100

        def push_block_spec_rule(self, ctx, specs):
            calls.append(("push", tuple(specs[0].block_shape)))
            return specs
    return ns, Square, SquareWithRules, calls


def _run(lib, with_rules):
    ns, square, square_with_rules, calls = _primitives(lib)
    jax, pl, fuser = ns.jax, ns.pl, ns.fuser
    t = jax.ShapeDtypeStruct(X.shape, X.dtype)
    p = (square_with_rules if with_rules else square)(jax.typeof(ns.jnp.asarray(X)))
    f = lambda x: p(x) + 1
    spec = pl.BlockSpec((8, 128), lambda i, j: (i, j))
    kfn, (xspec,), _ = fuser.pull_block_spec(f, spec, grid_len=2)(t)
    pts = [(0, 0), (1, 1), (1, 0)]
    blocks = [np.asarray(kfn(q, (), X[8 * q[0]:8 * q[0] + 8, 128 * q[1]:128 * q[1] + 128]))
              for q in pts]
    pushed = fuser.push_block_spec(f, spec)(t)
    return (tuple(xspec.block_shape), [tuple(int(i) for i in xspec.index_map(*q))
                                       for q in pts], blocks,
            tuple(pushed.block_shape), calls)


def test_primitive_rules_are_used_as_jax_uses_them():
    got, want = _run("mjax", True), _run("jax", True)
    assert got[0] == want[0] == (8, 128) and got[1] == want[1] == [(0, 0), (1, 1), (1, 0)]
    for q, g, w in zip(want[1], got[2], want[2]):
        np.testing.assert_array_equal(g, w)
        x = X[8 * q[0]:8 * q[0] + 8, 128 * q[1]:128 * q[1] + 128]
        np.testing.assert_allclose(g, x * x + 101, rtol=1e-6)
    assert got[3] == want[3] == (8, 128)
    assert sorted(set(got[4])) == sorted(set(want[4])) == [
        ("eval", (8, 128)), ("pull", (8, 128)), ("push", (8, 128))]


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_primitive_without_rules_is_jax_error(lib):
    with pytest.raises(AttributeError, match="pull_block_spec_rule"):
        _run(lib, False)
