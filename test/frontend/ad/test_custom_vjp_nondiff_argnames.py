"""custom_vjp(nondiff_argnames=) (JAX 0.10.2) and a bwd cotangent given for a None
argument (ignored, as JAX does; megablox's gmm relies on both behaviours of JAX)."""
import jax
import pytest

import mjax


def _make(lib):
    def f(x, scale, mode="a"):
        return x * scale

    g = lib.custom_vjp(f, nondiff_argnames=("mode",))

    def fwd(x, scale, mode="a"):
        return f(x, scale, mode), (x, scale)

    def bwd(mode, r, ct):
        x, s = r
        return ct * s * (2.0 if mode == "b" else 1.0), ct * x
    g.defvjp(fwd, bwd)
    return g


def test_nondiff_argnames_matches_jax():
    for kw in ({"mode": "b"}, {}):
        ours = mjax.grad(lambda x: _make(mjax)(x, 3.0, **kw))(2.0)
        theirs = jax.grad(lambda x: _make(jax)(x, 3.0, **kw))(2.0)
        assert float(ours) == float(theirs)
    assert _make(mjax).nondiff_argnums == (2,)
    with pytest.raises(ValueError, match="not a parameter"):
        mjax.custom_vjp(lambda x: x, nondiff_argnames=("y",))


def test_cotangent_for_a_none_argument_is_ignored():
    def run(lib):
        @lib.custom_vjp
        def f(x, y):
            return x * 2

        f.defvjp(lambda x, y: (f(x, y), None), lambda r, g: (g * 2, g * 5))
        return lib.grad(lambda x: f(x, None))(1.0)
    assert float(run(mjax)) == float(run(jax)) == 2.0
