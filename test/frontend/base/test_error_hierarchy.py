"""mjax's exception classes have JAX's names and base classes, and user mistakes raise
what JAX raises: each case is provoked in real jax and in mjax, and the classes compared."""
import inspect

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mjnp

JAX_ERRORS = sorted(n for n in dir(jax.errors) if inspect.isclass(getattr(jax.errors, n)))


def _mro_names(cls):
    return [c.__name__ for c in cls.__mro__]


def test_every_jax_error_class_exists():
    assert JAX_ERRORS, "jax.errors lists no classes"
    missing = [n for n in JAX_ERRORS if not hasattr(mjax.errors, n)]
    assert not missing


@pytest.mark.parametrize("name", JAX_ERRORS)
def test_error_class_bases(name):
    assert _mro_names(getattr(mjax.errors, name)) == _mro_names(getattr(jax.errors, name))


def test_jax_runtime_error_is_jaxlibs():
    # A failed XLA run raises jaxlib's class; JAX's jax.errors.JaxRuntimeError is it.
    assert mjax.errors.JaxRuntimeError is jax.errors.JaxRuntimeError


def test_extend_core_errors_are_the_same_classes():
    assert mjax.extend.core.JaxprTypeError is mjax.errors.JaxprTypeError
    assert (mjax.extend.core.InconclusiveDimensionOperation
            is mjax.errors.InconclusiveDimensionOperation)


def test_jax_error_messages_end_with_the_error_page():
    with pytest.raises(mjax.errors.TracerBoolConversionError) as mine:
        mjax.jit(lambda v: 1 if v.sum() > 0 else 0)(mjnp.ones(2))
    with pytest.raises(jax.errors.TracerBoolConversionError) as theirs:
        jax.jit(lambda v: 1 if v.sum() > 0 else 0)(jjnp.ones(2))
    assert str(mine.value).splitlines()[-1] == str(theirs.value).splitlines()[-1]


def _callback_jvp(jx, jnp):
    def f(v):
        return jx.pure_callback(np.sin, jx.ShapeDtypeStruct(v.shape, v.dtype), v)
    return jx.jvp(f, (jnp.ones(3),), (jnp.ones(3),))


def _callback_grad(jx, jnp):
    def f(v):
        return jx.pure_callback(np.sin, jx.ShapeDtypeStruct(v.shape, v.dtype), v).sum()
    return jx.grad(f)(jnp.ones(3))


def _callback_vmap_refused(jx, jnp):
    def f(v):
        return jx.pure_callback(np.sin, jx.ShapeDtypeStruct(v.shape, v.dtype), v,
                                vmap_method=None)
    return jx.vmap(f)(jnp.ones((2, 3)))


def _io_callback_jvp(jx, jnp):
    io_callback = (jax.experimental.io_callback if jx is jax
                   else mjax.experimental.io_callback)

    def f(v):
        return io_callback(np.sin, jx.ShapeDtypeStruct(v.shape, v.dtype), v)
    return jx.jvp(f, (jnp.ones(3),), (jnp.ones(3),))


def _leak(jx, jnp):
    leaked = []
    jx.jit(lambda v: leaked.append(v) or v)(jnp.ones(2))
    return leaked[0] + 1


def _leaked(jx, jnp):
    """A tracer kept past its jit's trace (a side effect)."""
    saved = []
    jx.jit(lambda v: saved.append(v) or v)(jnp.ones(2))
    return saved[0]


CASES = {
    "leaked tracer passed to jit": lambda jx, jnp: jx.jit(lambda a: a * 2)(_leaked(jx, jnp)),
    "leaked tracer in an eager op": lambda jx, jnp: _leaked(jx, jnp) * 2,
    "string dimension": lambda jx, jnp: jnp.ones((2, "a")),
    "string dimension in a reshape": lambda jx, jnp: jnp.reshape(jnp.ones(7), (7, "s")),
    "float index": lambda jx, jnp: jnp.arange(6.0)[1.5],
    "float index under jit": lambda jx, jnp: jx.jit(lambda v: v[1.5])(jnp.arange(6.0)),
    "float array index": lambda jx, jnp: jnp.arange(6.0)[jnp.array([1.0])],
    "float list in a tuple index": lambda jx, jnp: jnp.ones((2, 2))[:, [1.0]],
    "numpy float scalar index": lambda jx, jnp: jnp.arange(6.0)[np.float32(2)],
    "string index": lambda jx, jnp: jnp.arange(6.0)["a"],
    "string array index": lambda jx, jnp: jnp.arange(6.0)[np.array(["a"])],
    "list index": lambda jx, jnp: jnp.arange(6.0)[[1, 2]],
    "nested list index": lambda jx, jnp: jnp.ones((2, 2))[[[0, 1]]],
    "too many indices": lambda jx, jnp: jnp.arange(6.0)[1, 2],
    "string array": lambda jx, jnp: jnp.array(["a", "b"]),
    "string scalar": lambda jx, jnp: jnp.asarray("abc"),
    "string numpy operand": lambda jx, jnp: jnp.add(np.array(["a"]), 1),
    "two -1 in reshape": lambda jx, jnp: jnp.reshape(jnp.arange(6.0), (-1, -1)),
    "two -1 in the reshape method": lambda jx, jnp: jnp.arange(6.0).reshape(-1, -1),
    "reshape size mismatch": lambda jx, jnp: jnp.arange(6.0).reshape(4, 2),
    "pure_callback jvp": _callback_jvp,
    "pure_callback grad": _callback_grad,
    "pure_callback vmap_method=None": _callback_vmap_refused,
    "io_callback jvp": _io_callback_jvp,
    "bool of a tracer": lambda jx, jnp: jx.jit(lambda v: 1 if v.sum() > 0 else 0)(
        jnp.ones(3)),
    "int of a tracer": lambda jx, jnp: jx.jit(lambda v: int(v[0]))(jnp.ones(3)),
    "index with a tracer": lambda jx, jnp: jx.jit(
        lambda v: [1, 2, 3][v[0].astype(int)])(jnp.ones(3)),
    "numpy of a tracer": lambda jx, jnp: jx.jit(np.asarray)(jnp.ones(3)),
    "traced boolean mask": lambda jx, jnp: jx.jit(lambda v: v[v > 2])(jnp.ones(3)),
    "traced arange bound": lambda jx, jnp: jx.jit(jnp.arange)(3),
    "leaked tracer": _leak,
    "grad of an int input": lambda jx, jnp: jx.grad(lambda v: v)(1),
    "grad of a vector output": lambda jx, jnp: jx.grad(lambda v: v)(jnp.ones(2)),
    "vmap size mismatch": lambda jx, jnp: jx.vmap(lambda a, b: a + b)(jnp.ones(2),
                                                                      jnp.ones(3)),
    "bad dtype name": lambda jx, jnp: jnp.zeros(3, dtype="foo"),
    "broadcast mismatch": lambda jx, jnp: jnp.ones(2) + jnp.ones(3),
    "grad of an op without a derivative rule": lambda jx, jnp: jx.grad(
        lambda a: jx.scipy.linalg.schur(a)[0].sum())(jnp.eye(3)),
    "unsupported dot algorithm on CPU": lambda jx, jnp: jx.jit(
        lambda a: jnp.dot(a, a, precision="TF32_TF32_F32"))(jnp.eye(3)),
}


# Axes out of range (they were taken modulo the rank, silently, by some of these).
CASES.update({
    "take_along_axis axis": lambda jx, jnp: jnp.take_along_axis(
        jnp.ones((2, 3)), jnp.zeros((2, 3), jnp.int32), axis=2),
    "unique axis": lambda jx, jnp: jnp.unique(jnp.ones((2, 3)), axis=2),
    "categorical axis": lambda jx, jnp: jx.random.categorical(jx.random.key(0),
                                                              jnp.ones((2, 3)), axis=2),
    "lax.argmax axis": lambda jx, jnp: jx.lax.argmax(jnp.ones((2, 3)), 2, jnp.int32),
    "lax.sort dimension": lambda jx, jnp: jx.lax.sort(jnp.ones((2, 3)), dimension=-3),
})
# (JAX raises IndexError from its own tuple indexing: the class is compared)
CASES["pmap axis beyond the rank"] = lambda jx, jnp: jx.pmap(lambda v: v, in_axes=1)(
    jnp.ones(3))


def _raised(fn, jx, jnp):
    try:
        fn(jx, jnp)
    except Exception as e:  # noqa: BLE001  (the class is what is compared)
        return type(e)
    return None


@pytest.mark.parametrize("case", sorted(CASES))
def test_user_error_raises_jaxs_class(case):
    theirs = _raised(CASES[case], jax, jjnp)
    mine = _raised(CASES[case], mjax, mjnp)
    assert theirs is not None, f"jax raised nothing for {case}"
    assert mine is not None, f"mjax raised nothing for {case}"
    # mjax's class may be a located subclass (a pass error), but it has JAX's class name
    # or is a subclass of it, and JAX's Python base classes.
    builtin_bases = [c for c in theirs.__mro__ if c.__module__ == "builtins"]
    assert all(issubclass(mine, b) for b in builtin_bases), (mine.__mro__, theirs.__mro__)
    if theirs.__module__ == "jax.errors" or theirs is jax.errors.JaxRuntimeError:
        assert _mro_names(mine) == _mro_names(theirs)


# User mistakes whose message is JAX's too (mjax may add the user's location).
MESSAGE_CASES = {
    "item assignment": lambda jx, jnp: jnp.ones(3).__setitem__(0, 1.0),
    "concatenate ranks": lambda jx, jnp: jnp.concatenate([jnp.ones(3), jnp.ones((2, 2))]),
    "concatenate shapes": lambda jx, jnp: jnp.concatenate([jnp.ones((2, 3)),
                                                           jnp.ones((2, 4))]),
    "dot contracting sizes": lambda jx, jnp: jnp.dot(jnp.ones(3), jnp.ones(4)),
    "matmul contracting sizes": lambda jx, jnp: jnp.ones((2, 3)) @ jnp.ones((4, 2)),
    "transpose permutation": lambda jx, jnp: jnp.transpose(jnp.ones((2, 3)), (0, 0)),
    "int as a PRNG key": lambda jx, jnp: jx.random.normal(3, (2,)),
    "negative shape": lambda jx, jnp: jnp.zeros(-1),
    "negative shape under jit": lambda jx, jnp: jx.jit(lambda: jnp.ones((2, -3)))(),
    "traced slice bound": lambda jx, jnp: jx.jit(lambda v, n: v[:n])(jnp.ones(3), 2),
    "sort dimension out of range": lambda jx, jnp: jx.lax.sort(jnp.ones(3), dimension=2),
    "negative eye": lambda jx, jnp: jnp.eye(2, -1),
    "where with one branch": lambda jx, jnp: jnp.where(True, 1.0),
    "pmap of a scalar": lambda jx, jnp: jx.pmap(lambda v: v)(1.0),
    "sort kind": lambda jx, jnp: jnp.sort(jnp.ones(3), kind="stable"),
    "argsort order": lambda jx, jnp: jnp.argsort(jnp.ones(3), order="a"),
    "asarray order": lambda jx, jnp: jnp.asarray(jnp.ones(3), order="F"),
}



def _raised_with_message(fn, jx, jnp):
    try:
        fn(jx, jnp)
    except Exception as e:  # noqa: BLE001  (the class and message are compared)
        return type(e), str(e).split(" (in jaxpr.")[0].split(" (at ")[0]
    return None, None


@pytest.mark.parametrize("case", sorted(MESSAGE_CASES))
def test_user_error_raises_jaxs_class_and_message(case):
    theirs, their_text = _raised_with_message(MESSAGE_CASES[case], jax, jjnp)
    mine, my_text = _raised_with_message(MESSAGE_CASES[case], mjax, mjnp)
    assert theirs is not None and mine is not None, (theirs, mine)
    builtin_bases = [c for c in theirs.__mro__ if c.__module__ == "builtins"]
    assert all(issubclass(mine, b) for b in builtin_bases), (mine.__mro__, theirs.__mro__)
    assert my_text.splitlines()[0] == their_text.splitlines()[0]
