"""`mjax.nn`'s functions: activations, softmax and friends over `mjax.numpy` (JAX:
jax._src.nn.functions; `logsumexp` is here too, jax.scipy.special re-exports it).

Everything here composes existing ops, so `grad`, `vmap` and `jit` need no new rules. The
few functions whose derivative JAX pins at a kink (relu at 0, relu6 at 0 and 6) say so with
`custom_jvp`.
"""
from __future__ import annotations

import math
import operator
import warnings

import numpy as _onp

from mjax.specs import dtypes as _dt
from mjax.base.errors import ConcretizationTypeError
from mjax.tracing.core import Tracer
from mjax import lax
from mjax import numpy as jnp
from mjax.ad import custom_jvp
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.arguments import AxisError, check_arraylike
from mjax.nn.block_scaled import (get_scaled_dot_general_config, scaled_dot_general,  # noqa: F401
                                  scaled_matmul)

__all__ = ["relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "silu", "swish", "gelu",
           "elu", "leaky_relu", "celu", "selu", "hard_tanh", "hard_sigmoid", "hard_silu",
           "hard_swish", "soft_sign", "mish", "glu", "softmax", "log_softmax", "logsumexp",
           "one_hot", "standardize", "identity", "tanh", "log1mexp", "logmeanexp",
           "sparse_plus", "sparse_sigmoid", "squareplus", "scaled_matmul", "scaled_dot_general",
           "get_scaled_dot_general_config"]


def _float(name, x, weak_integers=False):
    """x as an inexact array; a Python int or float stays weakly typed, as in JAX.
    weak_integers: an integer or bool array becomes a weakly typed float too (JAX's elu,
    leaky_relu and celu promote it with their Python float constants)."""
    weak = _dt.is_python_scalar(x) and isinstance(x, (int, float)) and not isinstance(x, bool)
    if weak_integers and (isinstance(x, bool) or hasattr(x, "dtype")
                          and not _dt.is_inexact(x.dtype)):
        weak = True
    (x,) = jnp._promote(name, x, inexact=True)
    return lax.convert_element_type(x, x.dtype, weak_type=True) if weak else x


def _floating_only(name, x):
    """x unchanged if inexact; JAX's lax-level activations reject integers and bools."""
    weak = _dt.is_python_scalar(x) and isinstance(x, (int, float)) and not isinstance(x, bool)
    x = jnp.asarray(x)
    if not _dt.is_inexact(x.dtype):
        raise TypeError(f"{name} does not accept dtype {x.dtype}. Accepted dtypes are "
                        "subtypes of floating, complexfloating.")
    return lax.convert_element_type(x, x.dtype, weak_type=True) if weak else x


def relu(x):
    """max(x, 0); its derivative at 0 is 0 (JAX's choice). JAX: jax.nn.relu."""
    x = jnp.asarray(x)
    return _relu(x) if _dt.is_inexact(x.dtype) else jnp.maximum(x, 0)


def relu6(x):
    """min(max(x, 0), 6); derivative 0 at both kinks. JAX: jax.nn.relu6."""
    x = jnp.asarray(x)
    return _relu6(x) if _dt.is_inexact(x.dtype) else jnp.minimum(jnp.maximum(x, 0), 6.0)


# The custom rules take floats only: integer inputs have no tangents to mask.
@custom_jvp
def _relu(x):
    return jnp.maximum(x, 0)


@_relu.defjvp
def _relu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _relu(x), jnp.where(x > 0, t, jnp.zeros_like(t))


@custom_jvp
def _relu6(x):
    return jnp.minimum(jnp.maximum(x, 0), 6)


@_relu6.defjvp
def _relu6_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    inside = jnp.logical_and(x > 0, x < 6)
    return _relu6(x), jnp.where(inside, t, jnp.zeros_like(t))


def sigmoid(x):
    """1 / (1 + exp(-x)). JAX: jax.nn.sigmoid."""
    return lax.logistic(_floating_only("logistic", x))


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def softplus(x):
    """log(1 + exp(x)), stable for large |x|. JAX: jax.nn.softplus."""
    return jnp.logaddexp(x, 0)  # (jnp's promotion: a bool is weakly typed with the 0)


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x). JAX: jax.nn.log_sigmoid."""
    return -softplus(-jnp.asarray(x))  # (a bool: neg's TypeError, as in JAX)


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def silu(x):
    """x * sigmoid(x). JAX: jax.nn.silu."""
    x = _floating_only("logistic", x)
    return x * sigmoid(x)


swish = silu


def gelu(x, approximate: bool = True):
    """Gaussian error linear unit; the tanh approximation by default. JAX: jax.nn.gelu."""
    x = _float("gelu", x)
    if approximate:
        # JAX's operation order (x * cdf, x ** 3), so rounding matches in value and grad.
        c = math.sqrt(2 / math.pi)
        cdf = 0.5 * (1.0 + jnp.tanh(c * (x + 0.044715 * (x ** 3))))
        out = x * cdf
    else:
        # 0.5 x erfc(-x sqrt(1/2)): JAX's ops in JAX's order (the same bits)
        out = 0.5 * x * lax.erfc(-x * _onp.sqrt(0.5).astype(x.dtype))
    # JAX's constants are typed arrays: the result is never weakly typed.
    return lax.convert_element_type(out, out.dtype, weak_type=False)


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def elu(x, alpha=1.0):
    """x for x > 0, alpha * (exp(x) - 1) otherwise. JAX: jax.nn.elu."""
    x = _float("elu", x, weak_integers=True)
    positive = x > 0
    # expm1 of the clamped value: the unused branch must not overflow (its gradient is NaN).
    return jnp.where(positive, x, alpha * jnp.expm1(jnp.where(positive, 0, x)))


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def leaky_relu(x, negative_slope=1e-2):
    """x for x >= 0, negative_slope * x otherwise. JAX: jax.nn.leaky_relu."""
    x = _float("leaky_relu", x, weak_integers=True)
    return jnp.where(x >= 0, x, negative_slope * x)


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def celu(x, alpha=1.0):
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha). JAX: jax.nn.celu."""
    x = _float("celu", x, weak_integers=True)
    return jnp.maximum(x, 0) + alpha * jnp.expm1(jnp.minimum(x, 0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def selu(x):
    """scale * elu(x, alpha) with the self-normalizing constants. JAX: jax.nn.selu."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def hard_tanh(x):
    """x clipped to [-1, 1] (integers stay integers). JAX: jax.nn.hard_tanh."""
    if not isinstance(x, (bool, int, float)):
        x = jnp.asarray(x)  # Python scalars stay weakly typed, as in JAX
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def hard_sigmoid(x):
    """relu6(x + 3) / 6. JAX: jax.nn.hard_sigmoid."""
    return relu6(_float("hard_sigmoid", x, weak_integers=True) + 3.0) / 6.0


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def hard_silu(x):
    """x * hard_sigmoid(x). JAX: jax.nn.hard_silu."""
    x = _float("hard_silu", x, weak_integers=True)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def _arraylike(name, x):
    """JAX's ensure_arraylike: an array (a Python scalar's weakly typed), not a list."""
    check_arraylike(name, x)
    return jnp.asarray(x)


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def soft_sign(x):
    """x / (|x| + 1), promoted as JAX's (a bool is weak beside the 1). JAX: jax.nn.soft_sign."""
    x = _arraylike("soft_sign", x)
    return x / (jnp.abs(x) + 1)


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def mish(x):
    """x * tanh(softplus(x)), promoted as JAX's. JAX: jax.nn.mish."""
    x = _arraylike("mish", x)
    return x * jnp.tanh(softplus(x))


class _GluSizeError(ValueError, AssertionError):
    """An odd-sized glu axis: a ValueError that is also the AssertionError JAX raises."""


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def glu(x, axis=-1):
    """First half of x along `axis`, gated by the sigmoid of the second. JAX: jax.nn.glu."""
    x = jnp.asarray(x)
    n = x.shape[axis]
    if n % 2:
        raise _GluSizeError(f"mjax.nn.glu: axis {axis} must have even size, got {n}")
    a, b = jnp.split(x, 2, axis=axis)
    return a * sigmoid(b)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over `axis`, shifted by the max for stability.

    With return_sign, returns (log|s|, sign(s)); otherwise a negative sum gives NaN.
    Masked-out entries (where=False) are left out. JAX: jax.scipy.special.logsumexp."""
    # (JAX's order of operations, so that fused half float programs round alike)
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is None:
        (a,) = jnp._promote("logsumexp", a, inexact=True)
    else:
        a, b = jnp._promote("logsumexp", a, b, inexact=True)
        a = jnp.where(b != 0, a, -jnp.inf)
    axes = jnp._axes(axis, a.ndim)
    amax = jnp.max(jnp.real(a), axis=axes, keepdims=keepdims, where=where, initial=-jnp.inf)
    # An infinite max (all -inf, or some +inf) would give inf - inf: shift by 0 instead.
    amax = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, jnp.zeros_like(amax)))
    e = jnp.exp(a - (amax if keepdims else lax.expand_dims(amax, axes)).astype(a.dtype))
    if b is not None:
        e = e * b
    total = jnp.sum(e, axis=axes, keepdims=keepdims, where=where)
    sign = jnp.sign(total)
    complex_ = _dt.issubdtype(a.dtype, _onp.complexfloating)
    if return_sign or not complex_:
        total = jnp.abs(total)
    out = jnp.log(total) + amax.astype(total.dtype)
    if return_sign:
        return out, sign
    if b is not None and not complex_:
        out = jnp.where(sign < 0, jnp.full_like(out, jnp.nan), out)
    return out


def _masked_max(x, axis, where):
    """max over axis (keepdims), ignoring masked-out entries; never differentiated."""
    return lax.stop_gradient(jnp.max(x, axis=axis, keepdims=True, where=where,
                                     initial=-jnp.inf))


def _no_bool(name, x, axis):
    # JAX's softmax subtracts the max before promoting: bool has no subtraction (after
    # the max has checked the axes).
    x = jnp.asarray(x)
    for a in (() if axis is None else (axis,) if _onp.ndim(axis) == 0 else axis):
        if not -x.ndim <= a < x.ndim:
            raise AxisError(f"axis {a} is out of bounds for array of dimension {x.ndim}")
    if x.dtype == _onp.bool_:
        raise TypeError(f"{name}: sub does not accept dtype bool")


def _shiftable(name, x):
    """x for softmax's shift by its max: an integer array keeps its dtype (JAX subtracts
    before exp promotes, so the difference wraps as JAX's does); anything else inexact."""
    if hasattr(x, "dtype") and not _dt.is_python_scalar(x) and \
            _dt.issubdtype(x.dtype, _onp.integer):
        return jnp.asarray(x)
    return _float(name, x)


def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) along `axis`, shifted by the max for stability; masked-out
    entries (where=False) are 0. JAX: jax.nn.softmax."""
    _no_bool("softmax", x, axis)
    x = _shiftable("softmax", x)
    x_max = _masked_max(x, axis, where)
    unnormalized = jnp.exp((x if where is None else jnp.where(where, x, -jnp.inf)) - x_max)
    out = unnormalized / jnp.sum(unnormalized, axis=axis, keepdims=True, where=where)
    return out if where is None else jnp.where(where, out, 0)


@fused_when_eager   # (jitted in JAX: its fused bfloat16 ops round alike)
def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) along `axis`; masked-out entries are -inf. JAX: jax.nn.log_softmax."""
    _no_bool("log_softmax", x, axis)
    x = _shiftable("log_softmax", x)
    x_max = _masked_max(x, axis, where)
    shifted = (x if where is None else jnp.where(where, x, -jnp.inf)) - x_max
    out = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=axis, keepdims=True, where=where))
    return out if where is None else jnp.where(where, out, -jnp.inf)


def one_hot(x, num_classes: int, *, dtype=None, axis=-1):
    """x[..., None] == arange(num_classes), as `dtype` (float by default), the class axis
    at `axis`. Out-of-range values give all-zero rows. JAX: jax.nn.one_hot."""
    if isinstance(num_classes, Tracer):
        raise ConcretizationTypeError(num_classes, "The error arose in jax.nn.one_hot "
                                      "argument `num_classes`.")
    try:
        num_classes = operator.index(num_classes)
    except TypeError:
        raise TypeError(f"mjax.nn.one_hot: num_classes must be a static int, got "
                        f"{type(num_classes).__name__}") from None
    x = jnp.asarray(x)
    if not _dt.issubdtype(x.dtype, _onp.integer):   # (bool too, as JAX's "integral")
        warnings.warn(f"jax.nn.one_hot input should be integer-typed; got dtype={x.dtype}",
                      DeprecationWarning, stacklevel=2)
    out_ndim = x.ndim + 1
    axis = jnp._axis(axis, out_ndim)
    classes = lax.broadcasted_iota(x.dtype, x.shape[:axis] + (int(num_classes),)
                                   + x.shape[axis:], axis)
    hot = jnp.equal(jnp.expand_dims(x, axis), classes)
    return jnp.astype(hot, dtype or _dt.default_float())


@fused_when_eager   # (jitted in JAX: its fused bfloat16 ops round alike)
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon), statistics over `axis` unless given (means in
    float32 for half floats, as jnp.mean). algorithm="fast": variance as mean(x^2) -
    mean(x)^2, clipped at 0; "stable": as mean((x - mean)^2). JAX: jax.nn.standardize."""
    x = _float("standardize", x)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(x - mean), axis, keepdims=True, where=where)
        elif algorithm == "fast":
            variance = jnp.clip(jnp.mean(jnp.square(x), axis, keepdims=True, where=where)
                                - jnp.square(mean), 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or "
                             f"'stable'.")
    return (x - jnp.asarray(mean)) * lax.rsqrt(jnp.asarray(variance) + epsilon)


def identity(x):
    """x unchanged, as an array. JAX: jax.nn.identity."""
    return jnp.asarray(x)


def tanh(x, /):
    """Hyperbolic tangent (jax.numpy.tanh). JAX: jax.nn.tanh."""
    return jnp.tanh(x)


def log1mexp(x):
    """log(1 - exp(-x)), via expm1 below log 2 and log1p above (accurate both ways).
    JAX: jax.nn.log1mexp."""
    x = _float("log1mexp", x)
    return jnp.where(x < math.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


@fused_when_eager   # (jitted in JAX: its fused bfloat16 ops round alike)
def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) over `axis`, counting only where=True entries.
    JAX: jax.nn.logmeanexp."""
    x = _float("logmeanexp", x)
    lse = logsumexp(x, axis=axis, keepdims=keepdims, where=where)
    mask = jnp.ones(x.shape, bool) if where is None else jnp.broadcast_to(where, x.shape)
    count = jnp.sum(mask, axis=axis, keepdims=keepdims, dtype=lse.dtype)
    return lse - jnp.log(count)


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def sparse_plus(x):
    """0 below -1, x above 1, (x + 1)^2 / 4 between. JAX: jax.nn.sparse_plus."""
    x = _float("sparse_plus", x, weak_integers=True)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def sparse_sigmoid(x):
    """clip((x + 1) / 2, 0, 1), the derivative of sparse_plus. JAX: jax.nn.sparse_sigmoid."""
    x = _float("sparse_sigmoid", x, weak_integers=True)
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@fused_when_eager   # (jitted in JAX: fused, its multiply-adds round once)
def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2, a smooth relu. JAX: jax.nn.squareplus."""
    x, b = jnp._promote("squareplus", x, b, inexact=True)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2
