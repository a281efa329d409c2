"""Error messages: name the op, the shapes/dtypes and the user's line."""
import inspect
import re

import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import lax


def _here():
    return f"{__file__}:{inspect.currentframe().f_back.f_lineno}:"


def test_numpy_broadcast_error_names_op_shapes_and_line():
    with pytest.raises(TypeError) as e:
        where = _here(); jnp.add(jnp.ones(3), jnp.ones(4))  # noqa: E702
    msg = str(e.value)
    assert "add" in msg and "(3,)" in msg and "(4,)" in msg and where in msg


def test_error_inside_jit_points_at_user_line():
    def f(x, y):
        return x * y
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(TypeError) as e:
        mjax.jit(f)(jnp.ones((2, 3)), jnp.ones((3, 2)))
    msg = str(e.value)
    assert "multiply" in msg and "(2, 3)" in msg and "(3, 2)" in msg
    assert f"{__file__}:{line}:" in msg


def test_lax_dtype_mismatch_names_dtypes_and_line():
    with pytest.raises(TypeError) as e:
        where = _here(); lax.add(jnp.ones(3), jnp.ones(3, jnp.int32))  # noqa: E702
    msg = str(e.value)
    assert "jaxpr.add" in msg and "f32" in msg and "i32" in msg and where in msg


def test_lax_shape_mismatch():
    with pytest.raises(TypeError, match=r"add .*\(3,\).*\(4,\)"):
        lax.add(jnp.ones(3), jnp.ones(4))
    with pytest.raises(TypeError) as e:
        where = _here(); lax.dot_general(jnp.ones((2, 3)), jnp.ones((4, 3)), (((1,), (0,)), ((), ())))  # noqa: E501,E702
    assert "dot_general" in str(e.value) and "(2, 3)" in str(e.value) and where in str(e.value)


def test_matmul_and_reshape_errors():
    with pytest.raises(TypeError) as e:
        where = _here(); jnp.ones((2, 3)) @ jnp.ones((4, 3))  # noqa: E702
    # (JAX's words: its dot_general's, naming the contracting sizes)
    assert str(e.value).startswith("dot_general requires contracting dimensions to have the "
                                   "same shape, got (3,) and (4,).") and where in str(e.value)
    with pytest.raises(TypeError) as e:
        where = _here(); jnp.reshape(jnp.ones(6), (4,))  # noqa: E702
    assert "(6,)" in str(e.value) and "(4,)" in str(e.value) and where in str(e.value)


def test_concatenate_mismatch():
    with pytest.raises(TypeError) as e:
        where = _here(); jnp.concatenate([jnp.ones((2, 3)), jnp.ones((2, 4))], axis=0)  # noqa
    assert "concatenate" in str(e.value) and "(2, 4)" in str(e.value)
    assert where in str(e.value)


def test_bool_of_tracer():
    def f(x):
        if x > 0:
            return x
        return -x
    with pytest.raises(mjax.errors.TracerBoolConversionError) as e:
        mjax.jit(f)(1.0)
    msg = str(e.value)
    assert "lax.cond" in msg and "static_argnums" in msg
    assert f"{__file__}:{f.__code__.co_firstlineno + 1}:" in msg
    assert isinstance(e.value, mjax.errors.ConcretizationTypeError)


def test_int_and_float_of_tracer():
    # int() is a ConcretizationTypeError in JAX; __index__ a TracerIntegerConversionError
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda x: int(x))(1)
    with pytest.raises(mjax.errors.ConcretizationTypeError, match="static_argnums"):
        mjax.jit(lambda x: int(x))(1)
    with pytest.raises(mjax.errors.TracerIntegerConversionError, match="static_argnums"):
        mjax.jit(lambda x: range(x))(1)
    with pytest.raises(mjax.errors.TracerIntegerConversionError):
        mjax.jit(lambda x, i: x * [1, 2, 3][i])(jnp.ones(3), 1)
    with pytest.raises(mjax.errors.ConcretizationTypeError, match="lax.cond"):
        mjax.jit(lambda x: float(x))(1.0)
    with pytest.raises(mjax.errors.ConcretizationTypeError):
        mjax.jit(lambda x: x.item())(1.0)
    with pytest.raises(mjax.errors.TracerArrayConversionError):
        mjax.jit(lambda x: np.sin(np.asarray(x)))(1.0)


def test_leaked_tracer():
    leaked = []

    @mjax.jit
    def f(x):
        y = x * 2
        leaked.append(y)
        return y
    f(1.0)
    with pytest.raises(mjax.errors.UnexpectedTracerError, match="unexpected tracer"):
        leaked[0] + 1
    with pytest.raises(mjax.errors.UnexpectedTracerError):
        mjax.jit(lambda z: z + leaked[0])(1.0)
    # the message says where the leaked value was made
    with pytest.raises(mjax.errors.UnexpectedTracerError) as e:
        jnp.sin(leaked[0])
    assert re.search(re.escape(__file__) + r":\d+", str(e.value))


def test_index_errors():
    with pytest.raises(IndexError, match="out of bounds"):
        jnp.ones((0, 3))[5]   # (a static index past a non-empty axis is clamped, as in JAX)
    with pytest.raises(IndexError, match="Too many indices"):
        jnp.ones(3)[0, 0]
    with pytest.raises(IndexError):
        jnp.ones(3)[..., ...]
    with pytest.raises(IndexError, match="concrete"):
        mjax.jit(lambda x: x[x > 0])(jnp.ones(3))


def test_lax_expand_dims_and_squeeze_reject_bad_axes_like_jax():
    import jax
    import jax.numpy as jjnp
    for f in (lambda lx, x: lx.expand_dims(x((2, 3)), (3,)),
              lambda lx, x: lx.squeeze(x((2, 1)), (2,)),
              lambda lx, x: lx.squeeze(x((2, 1)), (0,))):
        with pytest.raises(ValueError) as theirs:
            f(jax.lax, jjnp.ones)
        with pytest.raises(ValueError) as ours:
            f(mjax.lax, mjax.numpy.ones)
        assert str(theirs.value) in str(ours.value)
