"""Errors raised under mjax's entry points reach the user without mjax's own frames, with
JAX's note, as JAX filters its tracebacks (jax_traceback_filtering); compared with JAX's
frames for the same user code."""
import os
import traceback

import jax
import jax.extend
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.extend
import mjax.numpy as jnp

_NOTE = "For simplicity, JAX has removed its internal frames"


def _bad(np_):
    def f(x):
        return np_.ones(2) + x       # a shape error inside the user's function
    return f


_CALLS = {
    "jit": lambda lib, f: lib.jit(f)(np.ones(3, np.float32)),
    "grad": lambda lib, f: lib.grad(lambda x: f(x).sum())(np.ones(3, np.float32)),
    "vmap": lambda lib, f: lib.vmap(f)(np.ones((2, 3), np.float32)),
    "jvp": lambda lib, f: lib.jvp(f, (np.ones(3, np.float32),), (np.ones(3, np.float32),)),
    "make_jaxpr": lambda lib, f: lib.make_jaxpr(f)(np.ones(3, np.float32)),
    "eval_shape": lambda lib, f: lib.eval_shape(f, np.ones(3, np.float32)),
    "jit of grad": lambda lib, f: lib.jit(lib.grad(lambda x: f(x).sum()))(
        np.ones(3, np.float32)),
}


_MACHINERY = ("jitted.py", "staging.py", "core.py", "batching.py", "reverse.py",
              "forward.py", "api.py", "eager.py", "primitive.py")


def _frames(lib, np_, call):
    with pytest.raises(Exception) as info:
        _CALLS[call](lib, _bad(np_))
    e = info.value
    return [(os.path.basename(fs.filename), fs.name) for fs in traceback.extract_tb(
        e.__traceback__)], getattr(e, "__notes__", [])


@pytest.mark.parametrize("call", sorted(_CALLS))
def test_machinery_frames_removed_as_jax(call):
    mine, notes = _frames(mjax, jnp, call)
    theirs, _ = _frames(jax, jjnp, call)
    here = os.path.basename(__file__)
    # The user's frames are JAX's; below the last one, only the library function the
    # error is raised in (jnp's add and what it calls), as in JAX.
    assert [f for f in mine if f[0] == here] == [f for f in theirs if f[0] == here]
    last_user = max(i for i, f in enumerate(mine) if f[0] == here)
    assert not any(f[0] in _MACHINERY for f in mine), mine
    assert mine[last_user][1] == "f"
    assert any(_NOTE in n for n in notes)


def test_filtering_off_keeps_mjax_frames():
    with _option("off"):
        with pytest.raises(TypeError) as info:
            mjax.jit(_bad(jnp))(np.ones(3, np.float32))
    files = [fs.filename for fs in traceback.extract_tb(info.value.__traceback__)]
    assert any(f.startswith(os.path.dirname(mjax.__file__)) for f in files)
    assert not any(_NOTE in n for n in getattr(info.value, "__notes__", []))


def test_remove_frames_keeps_the_whole_traceback_as_the_cause():
    with _option("remove_frames"):
        with pytest.raises(TypeError) as info:
            mjax.jit(_bad(jnp))(np.ones(3, np.float32))
    cause = info.value.__cause__
    assert type(cause).__name__ == "UnfilteredStackTrace"
    files = [fs.filename for fs in traceback.extract_tb(cause.__traceback__)]
    assert any(f.startswith(os.path.dirname(mjax.__file__)) for f in files)


class _option:
    def __init__(self, value):
        self.value = value

    def __enter__(self):
        self.old = mjax.config.read("jax_traceback_filtering")
        mjax.config.update("jax_traceback_filtering", self.value)

    def __exit__(self, *exc):
        mjax.config.update("jax_traceback_filtering", self.old)


def _primitive_without_abstract_eval(lib):
    p = lib.extend.core.Primitive("no_abstract_eval")

    def use(x):
        return p.bind(x)
    return lambda x: use(x) * 2


def test_every_machinery_frame_removed_under_jit_as_jax():
    """An error raised while a jit traces (a user primitive without an abstract
    evaluation rule): the frames left are the user's, the same as JAX's; none of mjax's
    package (its tracing modules are machinery however they are split)."""
    got = {}
    for lib in (mjax, jax):
        with pytest.raises(NotImplementedError) as info:
            lib.jit(_primitive_without_abstract_eval(lib))(np.float32(2.))
        got[lib.__name__] = [(os.path.basename(fs.filename), fs.name, fs.lineno)
                             for fs in traceback.extract_tb(info.value.__traceback__)]
    assert got["mjax"] == got["jax"]
