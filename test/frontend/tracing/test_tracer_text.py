"""What `print` and `repr` of a traced value show, compared with JAX's text: JitTracer
under jit, VmapTracer in a vmap body (for values computed from a mapped argument),
GradTracer in grad & co. (nested, and under jit), and the value itself where JAX knows
it (eager vmap's unmapped arguments, values no differentiation perturbs)."""
from __future__ import annotations

import contextlib
import io

import jax
import jax.numpy as jjnp
import numpy as np

import mjax
import mjax.numpy as jnp


def _printed(lib, np_, run):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        run(lib, np_)
    return out.getvalue()


def _body(np_):
    def f(x, y):
        z = np_.sin(y)
        print(x, "|", y, "|", z, "|", x * 2, "|", repr(z), "|", x.sum())
        return x * y
    return f


CASES = {
    "eager": lambda lib, np_: lib.vmap(_body(np_), in_axes=(0, None))(
        np_.arange(3.0), 2.0),
    "jit": lambda lib, np_: lib.jit(lib.vmap(_body(np_), in_axes=(0, None)))(
        np_.arange(3.0), 2.0),
    "nested": lambda lib, np_: lib.vmap(lib.vmap(_body(np_)))(
        np_.ones((2, 3, 4)), np_.ones((2, 3, 4))),
    "axis1": lambda lib, np_: lib.vmap(_body(np_), in_axes=(1, None))(
        np_.ones((2, 3)), np.float32(2.0)),
    "plain_jit": lambda lib, np_: lib.jit(lambda x: print(x, repr(x * 2)))(
        np_.ones(3)),
}


def test_printed_tracers_match_jax():
    for name, run in CASES.items():
        assert _printed(mjax, jnp, run) == _printed(jax, jjnp, run), name


def _grad_body(np_):
    def f(x):
        c = np_.sin(3.0)
        print(x, "|", x * 2, "|", c, "|", repr(x), "|", repr(c))
        return x ** 3 * c
    return f


GRAD_CASES = {
    "grad": lambda lib, np_: lib.grad(_grad_body(np_))(2.0),
    "jit_grad": lambda lib, np_: lib.jit(lib.grad(_grad_body(np_)))(2.0),
    "value_and_grad": lambda lib, np_: lib.value_and_grad(_grad_body(np_))(np_.float32(2)),
    "not_differentiated": lambda lib, np_: lib.grad(
        lambda x, y: _grad_body(np_)(x) * y, argnums=1)(2.0, 3.0),
    "jacrev": lambda lib, np_: lib.jacrev(_grad_body(np_))(np_.ones(2)),
    "grad_grad": lambda lib, np_: lib.grad(lib.grad(_grad_body(np_)))(2.0),
    "jit_grad_grad": lambda lib, np_: lib.jit(lib.grad(lib.grad(_grad_body(np_))))(2.0),
    "jit_inside": lambda lib, np_: lib.grad(lambda x: lib.jit(_grad_body(np_))(x))(2.0),
    # (eager vjp and linearize are reverse mode in JAX: their tracers print so too)
    "vjp": lambda lib, np_: lib.vjp(_grad_body(np_), 2.0),
    "linearize": lambda lib, np_: lib.linearize(_grad_body(np_), np_.float32(2)),
    "jit_vjp": lambda lib, np_: lib.jit(lambda x: lib.vjp(_grad_body(np_), x)[0])(2.0),
}


def test_printed_gradient_tracers_match_jax():
    for name, run in GRAD_CASES.items():
        assert _printed(mjax, jnp, run) == _printed(jax, jjnp, run), name


JVP_CASES = {
    "jvp": lambda lib, np_: lib.jvp(_grad_body(np_), (2.0,), (0.5,)),
    "jvp_arrays": lambda lib, np_: lib.jvp(lambda x, y: _grad_body(np_)(x * y),
                                           (np_.arange(3.0), np_.float32(2)),
                                           (np_.ones(3), np_.float32(-1))),
    "jvp_int_argument": lambda lib, np_: lib.jvp(lambda x, n: _grad_body(np_)(x) * n,
                                                 (2.0, 3), (1.0, np.zeros((), lib.dtypes.float0))),
    "jit_jvp": lambda lib, np_: lib.jit(lambda x: lib.jvp(_grad_body(np_), (x,), (x,)))(2.0),
    "jvp_has_aux": lambda lib, np_: lib.jvp(lambda x: (_grad_body(np_)(x), x), (2.0,),
                                            (1.0,), has_aux=True),
}


def test_printed_jvp_tracers_match_jax():
    """A value jvp perturbs prints as JAX's JVPTracer, with its primal and tangent
    values outside jit and the jit's tracers under it."""
    for name, run in JVP_CASES.items():
        assert _printed(mjax, jnp, run) == _printed(jax, jjnp, run), name


def test_forward_mode_shows_known_values():
    """Under jvp, a value no tangent reaches prints as its value, as in JAX (perturbed
    ones keep mjax's text: JAX's JVPTracer shows tangent values)."""
    run = lambda lib, np_: lib.jvp(lambda x: print(np_.sin(3.0)) or x, (2.0,), (1.0,))  # noqa
    assert _printed(mjax, jnp, run) == _printed(jax, jjnp, run)
