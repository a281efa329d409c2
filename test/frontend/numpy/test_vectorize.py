"""mjax.numpy.vectorize against jax.numpy.vectorize: loop dims broadcast, core dims from
the signature, excluded arguments, and JAX's errors."""
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp
from frontend_util import check

RNG = np.random.default_rng(2)


def _both(make, *args, **kw):
    want = jjnp.vectorize(make(jjnp), **kw)(*args)
    got = mnp.vectorize(make(mnp), **kw)(*args)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            check(g, w)
    else:
        check(got, want)


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 1), (3,)), ((), (4,)),
                                    ((2, 1, 3), (1, 4, 1)), ((), ())])
def test_scalar_function_broadcasts(shapes):
    a, b = (RNG.normal(size=s).astype(np.float32) for s in shapes)
    _both(lambda np_: lambda x, y: np_.sin(x) * y + 1.0, a, b)


def test_vectorize_is_a_decorator_and_keeps_the_name():
    @mnp.vectorize
    def poly(x):
        return x * x - 2.0 * x
    assert poly.__name__ == "poly"
    x = RNG.normal(size=(3, 2)).astype(np.float32)
    check(poly(x), x * x - 2.0 * x)


def test_signature_core_dims_elementwise_body():
    # (n),(n)->(n): core dims are passed whole; loop dims broadcast.
    a = RNG.normal(size=(2, 1, 3)).astype(np.float32)
    b = RNG.normal(size=(4, 3)).astype(np.float32)
    _both(lambda np_: lambda x, y: x * y - y, a, b, signature="(n),(n)->(n)")


def test_signature_with_several_outputs():
    a = RNG.normal(size=(5, 3)).astype(np.float32)
    _both(lambda np_: lambda x: (x + 1.0, x * 2.0), a, signature="(k)->(k),(k)")


def test_signature_unmapped_loop_dim_is_expanded():
    # A loop dim every argument has size 1 in comes back as size 1.
    a = RNG.normal(size=(1, 3)).astype(np.float32)
    _both(lambda np_: lambda x: x * 3.0, a, signature="(k)->(k)")
    _both(lambda np_: lambda x, y: x + y, a, a[:, :1] * 0 + 1.0)


def test_excluded_positional_argument():
    a = RNG.normal(size=(4,)).astype(np.float32)

    def make(np_):
        def f(x, power):
            assert isinstance(power, int)
            return x ** power
        return f
    check(mnp.vectorize(make(mnp), excluded={1})(a, 3),
          jjnp.vectorize(make(jjnp), excluded={1})(a, 3))


def test_none_argument_is_passed_through():
    a = RNG.normal(size=(4,)).astype(np.float32)

    def make(np_):
        return lambda x, y: x * 2.0 if y is None else x * y
    check(mnp.vectorize(make(mnp))(a, None), jjnp.vectorize(make(jjnp))(a, None))


def test_vectorize_under_jit_and_grad():
    a = RNG.normal(size=(3, 4)).astype(np.float32)
    f = mnp.vectorize(lambda x: mnp.sin(x) * x)
    jf = jjnp.vectorize(lambda x: jjnp.sin(x) * x)
    check(mjax.jit(f)(a), jf(a))
    import jax
    check(mjax.grad(lambda x: f(x).sum())(a), jax.grad(lambda x: jf(x).sum())(a))


# ---- errors --------------------------------------------------------------------------------
def test_errors_match_jax():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        mnp.vectorize(lambda x: x, signature="(n)->")(a)
    with pytest.raises(ValueError, match="does not have enough dimensions for all core"):
        mnp.vectorize(lambda x: x, signature="(n,m,k)->()")(a)
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        mnp.vectorize(lambda x, y: x, signature="(n),(n)->(n)")(a, np.ones(4, np.float32))
    with pytest.raises(TypeError, match="wrong number of positional arguments"):
        mnp.vectorize(lambda x, y: x, signature="(n),(n)->(n)")(a)
    with pytest.raises(ValueError, match="output shape .* does not match core dimensions"):
        mnp.vectorize(lambda x: x, signature="(n)->()")(a)
    with pytest.raises(TypeError, match="output must be a tuple"):
        mnp.vectorize(lambda x: x, signature="(n)->(n),(n)")(a)
    with pytest.raises(TypeError, match="can only exclude integer or string"):
        mnp.vectorize(lambda x: x, excluded={1.5})
    with pytest.raises(ValueError, match="contains negative numbers"):
        mnp.vectorize(lambda x: x, excluded={-1})
    with pytest.raises(ValueError):
        mnp.vectorize(lambda x, y: x + y)(np.ones(3), np.ones(4))
