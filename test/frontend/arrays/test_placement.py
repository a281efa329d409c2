"""Computations follow committed data, as in JAX: an array placed with
`device_put(x, device)` (and what is computed from it) runs its eager ops and jit calls on
that device; uncommitted operands are copied there; committed operands on two devices
are JAX's ValueError. Compared with jax on the 8 CPU devices test/conftest.py asks for."""
import types

import numpy as np
import pytest

import mjax
import mjax.numpy as jnp

import jax  # noqa: E402  (the test-only oracle)
import jax.numpy as jjnp


def _operands(J, np_):
    """The devices and arrays the uses compute with (made when a test runs: on a machine
    of one device, as the TPU machine, the file skips and nothing here runs)."""
    d0, d1, d2 = J.devices()[:3]
    return types.SimpleNamespace(
        d2=d2, x=J.device_put(np_.arange(3.0), d1), z=J.device_put(np_.arange(3.0), d2),
        w=J.device_put(np_.arange(3.0), d0))   # (w: committed to the default device)


def _uses(J, np_):
    f = J.jit(lambda a, b: a + b)
    return {
        "eager add": lambda v: v.x + 1, "eager sin": lambda v: np_.sin(v.x),
        "index": lambda v: v.x[1], "sum": lambda v: np_.sum(v.x),
        "scalar mul": lambda v: v.x * 2.0,
        "jit": lambda v: J.jit(lambda a: a * 2)(v.x),
        "jit with uncommitted": lambda v: f(v.x, np_.ones(3)),
        "jit uncommitted only": lambda v: f(np_.ones(3), np_.ones(3)),
        "jit twice": lambda v: (f(v.x, v.x), f(v.x, v.x))[1],
        "computed from committed": lambda v: (v.x * 3) + np_.ones(3),
        "grad": lambda v: J.grad(lambda a: (a ** 2).sum())(v.x),
        "vmap": lambda v: J.vmap(np_.sin)(v.x),
        "two devices eager": lambda v: v.x + v.z,
        "two devices jit": lambda v: f(v.x, v.z),
        "default and other device eager": lambda v: v.w + v.x,
        "default and other device jit": lambda v: f(v.w, v.x),
        "other and default device jit": lambda v: f(v.x, v.w),
        "default device committed twice": lambda v: f(v.w, v.w),
        "default_device then outside": lambda v: _made_under(J, np_, v.d2) + np_.ones(3),
    }


def _made_under(J, np_, device):
    with J.default_device(device):
        return np_.arange(3.0)


@pytest.mark.parametrize("use", list(_uses(jax, jjnp)))
def test_computation_follows_committed_data(use):
    def run(J, np_):
        try:
            out = _uses(J, np_)[use](_operands(J, np_))
        except ValueError as e:
            return "ValueError", str(e).split(".")[0]
        return sorted(d.id for d in out.devices()), np.asarray(out)
    mine, theirs = run(mjax, jnp), run(jax, jjnp)
    assert mine[0] == theirs[0]
    if mine[0] == "ValueError":
        assert mine[1] == theirs[1]
    else:
        np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-6)


def test_jit_device_and_compiler_options():
    """jit(device=d) runs on d with committed results; compiler_options reach XLA (an
    unknown option is XLA's error); Lowered.compile takes them too. As jax."""
    import warnings

    def run(J, np_):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # (jax deprecates jit(device=))
            f = J.jit(lambda a: a * 2, device=J.devices()[3])
            out = f(np_.ones(3))
        g = J.jit(lambda a: np_.sin(a) * 2, compiler_options={"xla_cpu_enable_fast_math": True})
        lowered = J.jit(lambda a: a + 1).lower(np_.ones(2))
        with pytest.raises(Exception, match="No such compile option"):
            J.jit(lambda a: a, compiler_options={"not_an_option": 1})(np_.ones(2))
        with pytest.raises(Exception, match="No such compile option"):
            lowered.compile({"not_an_option": 1})
        return ([d.id for d in out.devices()], [d.id for d in (out + 1).devices()],
                np.asarray(g(np_.ones(3))), np.asarray(lowered.compile({})(np_.ones(2))))
    mine, theirs = run(mjax, jnp), run(jax, jjnp)
    assert mine[:2] == theirs[:2]
    for a, b in zip(mine[2:], theirs[2:]):
        np.testing.assert_allclose(a, b, rtol=1e-6)
