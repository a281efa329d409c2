"""What `print` and `repr` of a traced value show, compared with JAX's text: JitTracer
under jit, VmapTracer in a vmap body (for values computed from a mapped argument), and
the value itself where JAX knows it (eager vmap's unmapped arguments)."""
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
