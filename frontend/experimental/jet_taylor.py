"""The Taylor rules of mjax.experimental.jet, one per primitive, in `jet_rules`.

A rule takes the primal inputs and, for each, its list of K Taylor coefficients
(x(t) = x_0 + x_1 t + ... + x_K t^K, x_k = d^k x/dt^k / k!), and returns the output
primal and its K coefficients. Most rules are recurrences on coefficients that follow
from a first-order ODE the function satisfies (exp: y' = y x'; log: x y' = x'; ...);
others are compositions of simpler primitives, pushed through `jet2`.

The helpers `defzero`, `deflinear`, `def_deriv` and `def_comp` (and the rules they
install: `zero_prop`, `linear_prop`, `deriv_prop`) are JAX's names for the same
constructions, for users adding rules of their own.
"""
from __future__ import annotations

from functools import partial

import numpy as np

import mjax.numpy as jnp
from mjax import lax
from mjax.experimental.jet_interpreter import jet2, jet_rules, zero_series


def _p(name):
    return getattr(lax, f"{name}_p")


def _sum(terms):
    """The sum of a non-empty iterable of arrays (no Python 0 start)."""
    terms = iter(terms)
    total = next(terms)
    for t in terms:
        total = total + t
    return total


def _scaled(j, x):
    """j * x, without a multiplication by 1."""
    return x if j == 1 else j * x


def _over(x, k):
    """x / k, without a division by 1."""
    return x if k == 1 else x / k


# ---- families of rules -----------------------------------------------------------------
def zero_prop(prim, primals_in, series_in, **params):
    """A primitive whose output does not change to any order (comparisons, rounding)."""
    out = prim.bind(*primals_in, **params)
    if prim.multiple_results:
        return out, [zero_series] * len(out)
    return out, zero_series


def defzero(prim):
    jet_rules[prim] = partial(zero_prop, prim)


def linear_prop(prim, primals_in, series_in, **params):
    """A linear primitive: each coefficient is the primitive applied to the inputs'."""
    out = prim.bind(*primals_in, **params)
    terms = [prim.bind(*ts, **params) for ts in zip(*series_in)]
    if prim.multiple_results:
        return out, ([list(t) for t in zip(*terms)] if terms else [[] for _ in out])
    return out, terms


def deflinear(prim):
    jet_rules[prim] = partial(linear_prop, prim)


def _linear_in(prim, is_linear, primals_in, series_in, **params):
    """A primitive linear in some operands (`is_linear(i, n)`) given fixed values of
    the others (indices, a predicate): those keep their primals in every term."""
    n = len(primals_in)
    out = prim.bind(*primals_in, **params)
    order = len(series_in[0]) if series_in else 0
    terms = [prim.bind(*[series_in[i][k] if is_linear(i, n) else primals_in[i]
                         for i in range(n)], **params) for k in range(order)]
    return out, terms


def _def_linear_in(name, is_linear):
    jet_rules[_p(name)] = partial(_linear_in, _p(name), is_linear)


def _by_derivative(u, v0, deriv_coef):
    """Coefficients of y = g(x) from those of x (`u`) and y_0 = `v0`, where g'(x(t)) has
    coefficients `deriv_coef(v, m)`, computable from y's first m + 1 (y' = g'(x) x',
    so k y_k = sum_{j=1..k} j x_j c_{k-j})."""
    v = [v0]
    c = [deriv_coef(v, 0)]
    order = len(u) - 1
    for k in range(1, order + 1):
        v.append(_over(_sum(_scaled(j, c[k - j] * u[j]) for j in range(1, k + 1)), k))
        if k < order:
            c.append(deriv_coef(v, k))
    return v


def deriv_prop(prim, deriv, primals_in, series_in, **params):
    """y = prim(x) given g' = `deriv` (a function of x)."""
    x, = primals_in
    v = _deriv_series(x, list(series_in[0]), prim.bind(x, **params), deriv)
    return v[0], v[1:]


def _deriv_series(x, series, v0, deriv):
    """Coefficients of y = g(x), y_0 = v0, from g' = `deriv`. y_k needs g'(x)'s
    coefficients below k only, so g' is jetted one order short: a derivative that is
    itself defined by its derivative (lgamma -> digamma -> polygamma) recurses K levels
    deep at most."""
    if not series:
        return [v0]
    c0, cs = jet2(deriv, (x,), (series[:-1],))
    c = [c0] + list(cs)
    return _by_derivative([x] + series, v0, lambda v, m: c[m])


def def_deriv(prim, deriv):
    """A rule for unary `prim` from its first derivative `deriv`."""
    jet_rules[prim] = partial(deriv_prop, prim, deriv)


def def_comp(prim, comp, **kwargs):
    """A rule for `prim` as the composition `comp` of primitives that have rules."""
    jet_rules[prim] = partial(jet2, comp, **kwargs)


def _comp_series(prim, comp, primals_in, series_in, **params):
    """The primitive's own primal; the coefficients of the composition `comp`."""
    _, terms = jet2(comp, primals_in, series_in)
    return prim.bind(*primals_in, **params), terms


def _def_comp_series(name, comp):
    jet_rules[_p(name)] = partial(_comp_series, _p(name), comp)


def _cauchy(a, b, k, start=0):
    """Coefficient k of the product of series a and b (terms j >= start of a)."""
    return _sum(a[j] * b[k - j] for j in range(start, k + 1))


# ---- structural, comparison and rounding primitives --------------------------------------
for _name in ("le", "lt", "gt", "ge", "eq", "ne", "not", "and", "or", "xor", "floor",
              "ceil", "round", "sign", "stop_gradient", "is_finite", "shift_left",
              "shift_right_arithmetic", "shift_right_logical", "bitcast_convert_type",
              "argmax", "argmin", "population_count", "clz", "reduce_and", "reduce_or",
              "reduce_xor"):
    defzero(_p(_name))

for _name in ("neg", "real", "complex", "conj", "imag", "add", "sub",
              "convert_element_type", "broadcast_in_dim", "expand_dims", "concatenate",
              "split", "stack", "unstack", "pad", "reshape", "squeeze", "rev", "transpose",
              "slice", "reduce_sum", "reduce_window_sum", "fft", "copy", "device_put",
              "cumsum", "tile", "reduce_precision", "sharding_constraint"):
    deflinear(_p(_name))

_def_linear_in("dynamic_slice", lambda i, n: i == 0)
_def_linear_in("dynamic_update_slice", lambda i, n: i < 2)
_def_linear_in("gather", lambda i, n: i == 0)
_def_linear_in("scatter_add", lambda i, n: i != 1)
_def_linear_in("scatter_sub", lambda i, n: i != 1)
_def_linear_in("scatter", lambda i, n: i != 1)
_def_linear_in("select_n", lambda i, n: i > 0)


# ---- products and quotients -----------------------------------------------------------
def _bilinear(prim, primals_in, series_in, **params):
    """(x y)_k = sum_j x_j y_{k-j}, for any bilinear primitive."""
    u = [primals_in[0]] + list(series_in[0])
    w = [primals_in[1]] + list(series_in[1])
    out = prim.bind(u[0], w[0], **params)
    return out, [_sum(prim.bind(u[j], w[k - j], **params) for j in range(k + 1))
                 for k in range(1, len(u))]


for _name in ("mul", "dot_general", "conv_general_dilated"):
    jet_rules[_p(_name)] = partial(_bilinear, _p(_name))


def _div(primals_in, series_in, **params):
    """q = x / y: x = q y, so q_k = (x_k - sum_{j<k} q_j y_{k-j}) / y_0."""
    x, y = primals_in
    u, w = [x] + list(series_in[0]), [y] + list(series_in[1])
    q = [lax.div_p.bind(x, y, **params)]
    for k in range(1, len(u)):
        q.append((u[k] - _sum(q[j] * w[k - j] for j in range(k))) / y)
    return q[0], q[1:]


jet_rules[lax.div_p] = _div


def _square(primals_in, series_in, **params):
    x, = primals_in
    _, terms = _bilinear(lax.mul_p, (x, x), (series_in[0], series_in[0]))
    return lax.square_p.bind(x, **params), terms


jet_rules[lax.square_p] = _square


def _pow_by_squaring(x, n):
    if n < 0:
        return _pow_by_squaring(1 / x, -n)
    if n == 0:
        return jnp.ones_like(x)
    if n == 1:
        return x
    half = _pow_by_squaring(x * x, n // 2)
    return half if n % 2 == 0 else x * half


def _integer_pow(primals_in, series_in, *, y, **params):
    x, = primals_in
    _, terms = jet2(lambda a: _pow_by_squaring(a, y), primals_in, series_in)
    return lax.integer_pow_p.bind(x, y=y, **params), terms


jet_rules[lax.integer_pow_p] = _integer_pow


def _power(r, u, v0):
    """Coefficients of x^r (constant r) from x's: x y' = r x' y."""
    v = [v0]
    for k in range(1, len(u)):
        v.append(_sum(((r + 1) * j - k) * u[j] * v[k - j] for j in range(1, k + 1))
                 / (k * u[0]))
    return v


def _exp_series(u, v0):
    """Coefficients of exp(x) from x's (`u`) and v0 = exp(x_0): y' = y x'."""
    return _by_derivative(u, v0, lambda v, m: v[m])


def _pow(primals_in, series_in, **params):
    """x ** y = exp(y log x), with the primitive's own primal."""
    x, y = primals_in
    z0, zs = jet2(lambda a, b: lax.mul(b, lax.log(a)), primals_in, series_in)
    v = _exp_series([z0] + list(zs), lax.pow_p.bind(x, y, **params))
    return v[0], v[1:]


jet_rules[lax.pow_p] = _pow


def _unary(fn):
    """A rule from `fn(x, terms, **params) -> all coefficients`."""
    def rule(primals_in, series_in, **params):
        x, = primals_in
        v = fn(x, [x] + list(series_in[0]), **params)
        return v[0], v[1:]
    return rule


# ---- exponentials and logarithms -------------------------------------------------------
jet_rules[lax.exp_p] = _unary(lambda x, u, **p: _exp_series(u, lax.exp_p.bind(x, **p)))
jet_rules[lax.expm1_p] = _unary(lambda x, u, **p: [lax.expm1_p.bind(x, **p)] +
                                _exp_series(u, lax.exp(x))[1:])
jet_rules[lax.exp2_p] = _unary(lambda x, u, **p: _exp_series(
    [t * np.log(2.0) for t in u], lax.exp2_p.bind(x, **p)))


def _log_series(u, v0):
    """Coefficients of log(x) from x's: x y' = x', so
    y_k = (x_k - (1/k) sum_{j=1}^{k-1} j y_j x_{k-j}) / x_0."""
    v = [v0]
    for k in range(1, len(u)):
        rest = (_sum(j * v[j] * u[k - j] for j in range(1, k)) / k) if k > 1 else 0
        v.append((u[k] - rest) / u[0])
    return v


jet_rules[lax.log_p] = _unary(lambda x, u, **p: _log_series(u, lax.log_p.bind(x, **p)))
jet_rules[lax.log1p_p] = _unary(lambda x, u, **p: _log_series(
    [1 + u[0]] + u[1:], lax.log1p_p.bind(x, **p)))
jet_rules[lax.sqrt_p] = _unary(lambda x, u, **p: _power(0.5, u, lax.sqrt_p.bind(x, **p)))
jet_rules[lax.rsqrt_p] = _unary(lambda x, u, **p: _power(-0.5, u, lax.rsqrt_p.bind(x, **p)))
jet_rules[lax.cbrt_p] = _unary(lambda x, u, **p: _power(1 / 3, u, lax.cbrt_p.bind(x, **p)))


# ---- trigonometric and hyperbolic -------------------------------------------------------
def _sin_cos(sign, s0, c0, u, want):
    """Coefficients of s = sin x (want 0) or c = cos x (want 1), with sign -1; sinh and
    cosh with sign 1: s' = c x', c' = sign s x'. The other one is needed one order short."""
    s, c = [s0], [c0]
    order = len(u) - 1
    for k in range(1, order + 1):
        if want == 0 or k < order:
            s.append(_over(_sum(_scaled(j, u[j] * c[k - j]) for j in range(1, k + 1)), k))
        if want == 1 or k < order:
            c.append(_over(_sum(_scaled(sign * j, u[j] * s[k - j]) for j in range(1, k + 1)),
                           k))
    return (s, c)[want]


jet_rules[lax.sin_p] = _unary(lambda x, u, **p: _sin_cos(
    -1, lax.sin_p.bind(x, **p), lax.cos(x), u, 0))
jet_rules[lax.cos_p] = _unary(lambda x, u, **p: _sin_cos(
    -1, lax.sin(x), lax.cos_p.bind(x, **p), u, 1))
jet_rules[lax.sinh_p] = _unary(lambda x, u, **p: _sin_cos(
    1, lax.sinh_p.bind(x, **p), lax.cosh(x), u, 0))
jet_rules[lax.cosh_p] = _unary(lambda x, u, **p: _sin_cos(
    1, lax.sinh(x), lax.cosh_p.bind(x, **p), u, 1))


def _square_coef(v, m):
    return _sum(v[i] * v[m - i] for i in range(m + 1))


# tan' = 1 + tan^2, tanh' = 1 - tanh^2, logistic' = logistic (1 - logistic)
jet_rules[lax.tan_p] = _unary(lambda x, u, **p: _by_derivative(
    u, lax.tan_p.bind(x, **p), lambda v, m: (1 + v[0] * v[0]) if m == 0 else _square_coef(v, m)))
jet_rules[lax.tanh_p] = _unary(lambda x, u, **p: _by_derivative(
    u, lax.tanh_p.bind(x, **p), lambda v, m: (1 - v[0] * v[0]) if m == 0 else -_square_coef(v, m)))
jet_rules[lax.logistic_p] = _unary(lambda x, u, **p: _by_derivative(
    u, lax.logistic_p.bind(x, **p),
    lambda v, m: v[0] * (1 - v[0]) if m == 0 else v[m] - _square_coef(v, m)))

def_deriv(lax.asin_p, lambda x: lax.rsqrt(1 - lax.square(x)))
def_deriv(lax.acos_p, lambda x: -lax.rsqrt(1 - lax.square(x)))
def_deriv(lax.atan_p, lambda x: 1 / (1 + lax.square(x)))
def_deriv(lax.asinh_p, lambda x: lax.rsqrt(lax.square(x) + 1))
def_deriv(lax.acosh_p, lambda x: lax.rsqrt(lax.square(x) - 1))
def_deriv(lax.atanh_p, lambda x: 1 / (1 - lax.square(x)))


def _atan2(primals_in, series_in, **params):
    """a = atan2(x, y): a' = (y x' - x y') / (x^2 + y^2)."""
    x, y = primals_in
    u, w = [x] + list(series_in[0]), [y] + list(series_in[1])
    order = len(u) - 1
    r = [_cauchy(u, u, m) + _cauchy(w, w, m) for m in range(order)]
    du = [(m + 1) * u[m + 1] for m in range(order)]
    dw = [(m + 1) * w[m + 1] for m in range(order)]
    da = []   # coefficients of a'
    for m in range(order):
        num = _sum(w[j] * du[m - j] - u[j] * dw[m - j] for j in range(m + 1))
        rest = _sum(da[i] * r[m - i] for i in range(m)) if m else 0
        da.append((num - rest) / r[0])
    return lax.atan2_p.bind(x, y, **params), [da[k - 1] / k for k in range(1, order + 1)]


jet_rules[lax.atan2_p] = _atan2


# ---- special functions -------------------------------------------------------------------
def_deriv(lax.erf_p, lambda x: (2 / np.sqrt(np.pi)) * lax.exp(-lax.square(x)))
def_deriv(lax.erfc_p, lambda x: (-2 / np.sqrt(np.pi)) * lax.exp(-lax.square(x)))


def _erf_inv(x, u, **params):
    """y = erfinv(x): y' = (sqrt(pi)/2) exp(y^2) x'; exp(y^2)'s coefficients are built
    alongside y's."""
    scale = np.sqrt(np.pi) / 2
    sq, ex = [], []

    def coef(v, m):
        sq.append(_square_coef(v, m))
        ex.append(lax.exp(sq[0]) if m == 0 else
                  _sum(j * sq[j] * ex[m - j] for j in range(1, m + 1)) / m)
        return scale * ex[m]
    return _by_derivative(u, lax.erf_inv_p.bind(x, **params), coef)


jet_rules[lax.erf_inv_p] = _unary(_erf_inv)


def_deriv(lax.lgamma_p, lax.digamma)
def_deriv(lax.digamma_p, lambda x: lax.polygamma(jnp.ones_like(x), x))


def _polygamma(primals_in, series_in, **params):
    """polygamma(m, x) in x (m, an order, is constant): its derivative is
    polygamma(m + 1, x)."""
    m, x = primals_in
    v = _deriv_series(x, list(series_in[1]), lax.polygamma_p.bind(m, x, **params),
                      lambda a: lax.polygamma(m + 1, a))
    return v[0], v[1:]


jet_rules[lax.polygamma_p] = _polygamma


def _rem(primals_in, series_in, **params):
    """rem(x, y) = x - y trunc(x / y), trunc constant almost everywhere."""
    x, y = primals_in
    q = lax.div(x, y)
    trunc = lax.select(lax.lt(q, jnp.zeros_like(q)), lax.ceil(q), lax.floor(q))
    return (lax.rem_p.bind(x, y, **params),
            [a - b * trunc for a, b in zip(series_in[0], series_in[1])])


jet_rules[lax.rem_p] = _rem
def_comp(lax.clamp_p, lambda lo, x, hi: lax.min(lax.max(lo, x), hi))


# ---- piecewise: abs, max, min, reductions -------------------------------------------------
def _abs(primals_in, series_in, **params):
    x, = primals_in
    negative = lax.lt(x, jnp.zeros_like(x))
    return lax.abs_p.bind(x, **params), [lax.select(negative, -t, t) for t in series_in[0]]


jet_rules[lax.abs_p] = _abs


def _choose(prim, greater, primals_in, series_in, **params):
    """max/min: the terms of the chosen operand; at ties, the mean of both."""
    x, y = jnp.broadcast_arrays(*primals_in)
    wins, tie = greater(x, y), lax.eq(x, y)

    def term(a, b):
        a, b = jnp.broadcast_arrays(a, b)
        return lax.select(tie, (a + b) / 2, lax.select(wins, a, b))
    return (prim.bind(*primals_in, **params),
            [term(a, b) for a, b in zip(series_in[0], series_in[1])])


jet_rules[lax.max_p] = partial(_choose, lax.max_p, lax.gt)
jet_rules[lax.min_p] = partial(_choose, lax.min_p, lax.lt)


def _reduce_choose(prim, primals_in, series_in, *, axes, **params):
    """reduce_max/min: the mean of the terms at the places that attain the extremum."""
    x, = primals_in
    out = prim.bind(x, axes=axes, **params)
    if not series_in[0]:
        return out, []
    kept = tuple(1 if i in axes else d for i, d in enumerate(np.shape(x)))
    where = lax.eq(x, lax.reshape(out, kept))
    mask = lax.convert_element_type(where, jnp.result_type(series_in[0][0]))
    count = lax.reduce_sum(mask, axes)
    return out, [lax.reduce_sum(lax.mul(g, mask), axes) / count for g in series_in[0]]


jet_rules[lax.reduce_max_p] = partial(_reduce_choose, lax.reduce_max_p)
jet_rules[lax.reduce_min_p] = partial(_reduce_choose, lax.reduce_min_p)


def _tree_product(x, axes):
    """The product over `axes` as a balanced tree of multiplications (each of which has a
    rule)."""
    shape = np.shape(x)
    rest = [d for d in range(len(shape)) if d not in axes]
    n = int(np.prod([shape[d] for d in axes], dtype=np.int64))
    out_shape = tuple(shape[d] for d in rest)
    if n == 0:
        return jnp.ones(out_shape, x.dtype)
    x = lax.reshape(lax.transpose(x, (*axes, *rest)), (n, *out_shape))
    while n > 1:
        half = n // 2
        pairs = lax.mul(lax.slice_in_dim(x, 0, 2 * half, 2), lax.slice_in_dim(x, 1, 2 * half, 2))
        x = pairs if n % 2 == 0 else lax.concatenate([pairs, lax.slice_in_dim(x, n - 1, n)], 0)
        n = half + n % 2
    return lax.reshape(x, out_shape)


def _reduce_prod(primals_in, series_in, *, axes, **params):
    x, = primals_in
    _, terms = jet2(lambda a: _tree_product(a, tuple(axes)), primals_in, series_in)
    return lax.reduce_prod_p.bind(x, axes=axes, **params), terms


jet_rules[lax.reduce_prod_p] = _reduce_prod


def _cumulative(combine, primals_in, series_in, *, axis, reverse, **_):
    """cumprod/cummax/cummin: the jet of the parallel prefix scan (reduce_window has no
    rule of its own)."""
    return jet2(lambda a: lax.associative_scan(combine, a, reverse=reverse, axis=axis),
                primals_in, series_in)


jet_rules[lax.cumprod_p] = partial(_cumulative, lax.mul)
jet_rules[lax.cummax_p] = partial(_cumulative, lax.max)
jet_rules[lax.cummin_p] = partial(_cumulative, lax.min)


# ---- permutations: sort, top_k ------------------------------------------------------------
def _sort(primals_in, series_in, *, num_keys, **params):
    """sort: every coefficient is carried through the same permutation, as extra operands
    of the one sort (the keys are the primals' first `num_keys`)."""
    n, order = len(primals_in), len(series_in[0])
    flat = [t for terms in series_in for t in terms]
    outs = lax.sort_p.bind(*primals_in, *flat, num_keys=num_keys, **params)
    return list(outs[:n]), [list(outs[n + i * order:n + (i + 1) * order]) for i in range(n)]


jet_rules[lax.sort_p] = _sort


def _top_k(primals_in, series_in, *, k, axis=-1, **params):
    """top_k: the coefficients at the chosen indices; the indices have none."""
    x, = primals_in
    values, indices = lax.top_k_p.bind(x, k=k, axis=axis, **params)
    terms = [jnp.take_along_axis(t, indices, axis=axis) for t in series_in[0]]
    return [values, indices], [terms, zero_series]


jet_rules[lax.top_k_p] = _top_k
