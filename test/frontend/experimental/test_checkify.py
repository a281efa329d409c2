"""mjax.experimental.checkify against jax.experimental.checkify: each case runs on both
with the same code, and the messages (`err.get()`), which error is reported first, the
values and the exceptions raised must agree."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax import lax as jlax
from jax.experimental import checkify as jck

import mjax
import mjax.numpy as mjnp
from mjax import lax as mlax
from mjax.experimental import checkify as mck

JAX = (jax, jjnp, jck, jlax)
MJAX = (mjax, mjnp, mck, mlax)


def _get(r):
    return r[0].get()


def _pos(jnp, ck):
    def pos(x):
        ck.check(jnp.all(x > 0), "x must be positive, got {}", x)
        return jnp.log(x)
    return pos


def _scan(jnp, ck, lax):
    def f(xs):
        def body(c, x):
            ck.check(x < 3, "x too big: {}", x)
            return c + x, jnp.sin(x)
        return lax.scan(body, 0., xs)
    return f


def _while(ck, lax):
    def f(x):
        def cond(c):
            ck.check(c[1] < 100, "cond sees {}", c[1])
            return c[0] < 5
        def body(c):
            ck.check(c[1] < 8, "body sees {}", c[1])
            return c[0] + 1, c[1] * 2
        return lax.while_loop(cond, body, (0, x))
    return f


def _while_consts(jnp, ck, lax):
    def f(x, limit, step):
        def cond(c):        # closes over `limit`: a cond const
            ck.check(c[1] < 2 * limit, "cond {} limit {}", c[1], limit)
            return c[0] < limit
        def body(c):        # closes over `step`: a body const
            ck.check(c[1] < 50, "body {}", c[1])
            return c[0] + step, jnp.sqrt(c[1]) * 0. + c[1] * step
        return lax.while_loop(cond, body, (0., x))
    return f


def _fori(ck, lax):
    def f(x):
        def body(i, c):
            ck.check(c < 10, "c={} at i={}", c, i)
            return c + i
        return lax.fori_loop(0, 6, body, x)
    return f


def _two_checks(ck):
    def f(x):
        ck.check(x > 10, "first {}", x)
        ck.check(x > 5, "second {}", x)
        return x
    return f


def _nan_then_user(jnp, ck):
    def f(x):
        y = jnp.log(x)
        ck.check(x > 0, "neg {}", x)
        return y
    return f


def _grad_fn(jnp, ck):
    def g(x):
        ck.check(x > 0, "need positive {}", x)
        return jnp.sin(x) * x
    return g


def _recheck(jnp, ck):
    pos = _pos(jnp, ck)

    def inner(x):
        err, y = ck.checkify(pos)(x)
        ck.check_error(err)
        return y
    return inner


def _recheck_batched(jax, jnp, ck):
    pos = _pos(jnp, ck)

    def f(xs):
        err, y = jax.vmap(ck.checkify(pos))(xs)
        ck.check_error(err)
        return y
    return f


def _cond(jnp, ck, lax):
    pos = _pos(jnp, ck)
    return lambda p, x: lax.cond(p, pos, jnp.sin, x)


def _switch(jnp, lax):
    return lambda i, x: lax.switch(i, [lambda x: x, jnp.log, lambda x: x / 0.], x)


def _helper_twice(jax, ck):
    @jax.jit
    def helper(x):
        ck.check(x < 5, "too big {}", x)
        return x + 1
    return lambda x: helper(helper(x))


def _cond_check(ck, lax):
    def f(p, x):
        def yes(x):
            ck.check(x > 0, "x={}", x)
            return x
        return lax.cond(p, yes, lambda x: x, x)
    return f


def _scan_check(ck, lax):
    def f(xs):
        def body(c, x):
            ck.check(x < 2, "x={}", x)
            return c + x, None
        return lax.scan(body, 0., xs)[0]
    return f


def _custom_vjp(jax, jnp, ck):
    @jax.custom_vjp
    def f(x):
        ck.check(x > 0, "cv {}", x)
        return jnp.sin(x)
    f.defvjp(lambda x: (f(x), jnp.cos(x)), lambda r, g: (7. * g,))
    return f


def _custom_jvp(jax, jnp, ck):
    @jax.custom_jvp
    def f(x):
        ck.check(x > 0, "cj {}", x)
        return jnp.sin(x)
    f.defjvp(lambda p, t: (jnp.sin(p[0]), 5. * t[0]))
    return f


CASES = {
    # user checks, eager and jit, in control flow
    "eager": lambda jax, jnp, ck, lax: _get(ck.checkify(_pos(jnp, ck))(jnp.array([1., -1.]))),
    "eager_ok": lambda jax, jnp, ck, lax: _get(ck.checkify(_pos(jnp, ck))(jnp.array([1., 2.]))),
    "jit_of_checkify": lambda jax, jnp, ck, lax: _get(
        jax.jit(ck.checkify(_pos(jnp, ck)))(jnp.array([1., -1.]))),
    "checkify_of_jit": lambda jax, jnp, ck, lax: _get(
        ck.checkify(jax.jit(_pos(jnp, ck)))(jnp.array([3., -1.]))),
    "kwargs_format": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x: ck.check(x > 0, "a {a} b {b} c {}", x + 1, a=x, b=2 * x))(jnp.float32(-1.))),
    "scan": lambda jax, jnp, ck, lax: _get(ck.checkify(_scan(jnp, ck, lax))(jnp.arange(5.))),
    "scan_all_checks": lambda jax, jnp, ck, lax: _get(ck.checkify(
        _scan(jnp, ck, lax), errors=ck.all_checks)(jnp.array([1., jnp.inf, 5.]))),
    "while_body": lambda jax, jnp, ck, lax: _get(ck.checkify(_while(ck, lax))(jnp.float32(1.))),
    "while_cond": lambda jax, jnp, ck, lax: _get(
        ck.checkify(_while(ck, lax))(jnp.float32(200.))),
    "while_consts_both_fail": lambda jax, jnp, ck, lax: _get(ck.checkify(
        _while_consts(jnp, ck, lax), errors=ck.all_checks)(
        jnp.float32(2.), jnp.float32(30.), jnp.float32(3.))),
    "while_consts_cond": lambda jax, jnp, ck, lax: _get(ck.checkify(
        _while_consts(jnp, ck, lax))(jnp.float32(2.), jnp.float32(5.), jnp.float32(3.))),
    "while_consts_nan": lambda jax, jnp, ck, lax: _get(ck.checkify(
        _while_consts(jnp, ck, lax), errors=ck.nan_checks)(
        jnp.float32(-2.), jnp.float32(5.), jnp.float32(3.))),
    "while_consts_values": lambda jax, jnp, ck, lax: np.asarray(jax.jit(ck.checkify(
        _while_consts(jnp, ck, lax)))(jnp.float32(2.), jnp.float32(7.), jnp.float32(2.))[1]
    ).round(4).tolist(),
    "fori_loop_dynamic_bounds": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda n, x: lax.fori_loop(0, n, lambda i, c: (ck.check(c < 20, "c={} i={}", c, i),
                                                       c + i * 2.)[1], x))(
        jnp.int32(10), jnp.float32(0.))),
    "scan_reverse": lambda jax, jnp, ck, lax: _get(ck.checkify(lambda xs: lax.scan(
        lambda c, x: (ck.check(x < 3, "x={}", x), (c, x))[1], 0., xs, reverse=True))(
        jnp.arange(6.))),
    "nested_loops": lambda jax, jnp, ck, lax: _get(ck.checkify(lambda x: lax.fori_loop(
        0, 3, lambda i, c: lax.fori_loop(0, 3, lambda j, d: (
            ck.check(d < 5, "i={} j={} d={}", i, j, d), d + 1)[1], c), x))(jnp.int32(0))),
    "nan_in_cond_in_scan": lambda jax, jnp, ck, lax: _get(ck.checkify(lambda xs: lax.scan(
        lambda c, x: (c, lax.cond(x > 2, lambda x: jnp.log(x - 4.), lambda x: x, x)), 0., xs),
        errors=ck.nan_checks)(jnp.arange(6.))),
    "checkify_of_checkify": lambda jax, jnp, ck, lax: _get(ck.checkify(ck.checkify(
        lambda x: (ck.check(x > 0, "x={}", x), jnp.log(x))[1]), errors=ck.nan_checks)(
        jnp.float32(-1.))),
    "hessian_of_checkify": lambda jax, jnp, ck, lax: float(jax.hessian(
        lambda x: ck.checkify(lambda x: (ck.check(x > 0, "x={}", x), x ** 3)[1])(x)[1])(2.)),
    "fori_loop": lambda jax, jnp, ck, lax: _get(ck.checkify(_fori(ck, lax))(jnp.float32(0.))),
    "cond_taken": lambda jax, jnp, ck, lax: _get(
        ck.checkify(_cond(jnp, ck, lax))(True, jnp.float32(-1.))),
    "cond_not_taken": lambda jax, jnp, ck, lax: _get(
        ck.checkify(_cond(jnp, ck, lax))(False, jnp.float32(-1.))),
    "cond_nan": lambda jax, jnp, ck, lax: _get(ck.checkify(
        _cond(jnp, ck, lax), errors=ck.nan_checks)(True, jnp.float32(-1.))),
    "switch_div": lambda jax, jnp, ck, lax: _get(ck.checkify(
        _switch(jnp, lax), errors=ck.all_checks)(2, jnp.float32(-1.))),
    "switch_nan": lambda jax, jnp, ck, lax: _get(ck.checkify(
        _switch(jnp, lax), errors=ck.all_checks)(jnp.int32(1), jnp.float32(-1.))),
    "lax_map": lambda jax, jnp, ck, lax: _get(ck.checkify(lambda xs: lax.map(
        lambda x: (ck.check(x != 2, "two {}", x), x)[1], xs))(jnp.arange(4))),
    "jit_called_twice": lambda jax, jnp, ck, lax: _get(
        ck.checkify(_helper_twice(jax, ck))(jnp.float32(4.5))),
    # which error comes first
    "first_of_two": lambda jax, jnp, ck, lax: _get(ck.checkify(_two_checks(ck))(jnp.float32(1.))),
    "second_of_two": lambda jax, jnp, ck, lax: _get(
        ck.checkify(_two_checks(ck))(jnp.float32(7.))),
    "user_before_nan": lambda jax, jnp, ck, lax: _get(ck.checkify(
        _nan_then_user(jnp, ck), errors=ck.all_checks)(jnp.float32(-1.))),
    "int_and_float_payloads": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x, i: (ck.check(i > 10, "int {}", i), ck.check(x > 10, "float {}", x), x)[2])(
        jnp.float32(1.), jnp.int32(1))),
    "disabled_user_check": lambda jax, jnp, ck, lax: _get(
        ck.checkify(_pos(jnp, ck), errors=ck.nan_checks)(jnp.array([2.]))),
    "disabled_check_in_jit": lambda jax, jnp, ck, lax: _get(ck.checkify(jax.jit(
        lambda x: (ck.check(x > 0, "pos {}", x), x)[1]), errors=ck.div_checks)(
        jnp.float32(-1.))),
    "disabled_check_in_cond": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x: lax.cond(x < 5, lambda x: (ck.check(x > 0, "pos {}", x), x)[1],
                           lambda x: x, x), errors=ck.index_checks)(jnp.float32(-1.))),
    "nan_not_enabled": lambda jax, jnp, ck, lax: _get(ck.checkify(jnp.log)(jnp.float32(-1.))),
    # vmap
    "vmap_of_checkify": lambda jax, jnp, ck, lax: _get(
        jax.vmap(ck.checkify(_pos(jnp, ck)))(jnp.array([[1.], [-1.], [-2.]]))),
    "checkify_of_vmap": lambda jax, jnp, ck, lax: _get(
        ck.checkify(jax.vmap(_pos(jnp, ck)))(jnp.array([[1.], [-1.], [-2.]]))),
    "vmap_in_axes_1": lambda jax, jnp, ck, lax: _get(jax.vmap(ck.checkify(
        _pos(jnp, ck)), in_axes=1)(jnp.array([[1., -1.], [2., 3.]]))),
    "vmap_of_vmap": lambda jax, jnp, ck, lax: _get(jax.vmap(jax.vmap(ck.checkify(
        _pos(jnp, ck))))(jnp.array([[1., -1.], [2., -3.]]))),
    "pmap_of_checkify": lambda jax, jnp, ck, lax: _get(jax.pmap(ck.checkify(
        _pos(jnp, ck)))(jnp.array([[-1.]]))),
    "vmap_nan": lambda jax, jnp, ck, lax: _get(jax.vmap(
        ck.checkify(jnp.log, errors=ck.nan_checks))(jnp.array([1., -1., -2.]))),
    "vmap_no_error": lambda jax, jnp, ck, lax: _get(jax.vmap(
        ck.checkify(jnp.log, errors=ck.nan_checks))(jnp.array([1., 1.]))),
    "vmap_scan": lambda jax, jnp, ck, lax: _get(jax.vmap(ck.checkify(_scan_check(ck, lax)))(
        jnp.array([[0., 1., 2.], [0., 0., 0.], [3., 0., 9.]]))),
    "vmap_cond": lambda jax, jnp, ck, lax: _get(jax.vmap(ck.checkify(_cond_check(ck, lax)))(
        jnp.array([True, True, False]), jnp.array([1., -1., -2.]))),
    "checkify_vmap_cond": lambda jax, jnp, ck, lax: _get(ck.checkify(jax.vmap(
        _cond_check(ck, lax)))(jnp.array([True, True, False]), jnp.array([1., -1., -2.]))),
    # grad
    "checkify_of_grad": lambda jax, jnp, ck, lax: _get(
        ck.checkify(jax.grad(_grad_fn(jnp, ck)))(jnp.float32(-1.))),
    "checkify_of_grad_value": lambda jax, jnp, ck, lax: float(
        ck.checkify(jax.grad(_grad_fn(jnp, ck)))(jnp.float32(1.))[1]),
    "grad_of_checkify": lambda jax, jnp, ck, lax: float(
        jax.grad(lambda x: ck.checkify(_grad_fn(jnp, ck))(x)[1])(jnp.float32(2.))),
    "grad_custom_jvp_nan": lambda jax, jnp, ck, lax: _get(ck.checkify(
        jax.grad(lambda x: jax.nn.relu(x) * jnp.log(x)), errors=ck.nan_checks)(
        jnp.float32(-1.))),
    "checkpoint_nan": lambda jax, jnp, ck, lax: _get(ck.checkify(
        jax.checkpoint(lambda x: jnp.log(x) * 2), errors=ck.nan_checks)(jnp.float32(-1.))),
    # custom rules keep working under checkify (the state passes through them)
    "relu_grad_at_zero": lambda jax, jnp, ck, lax: float(jax.grad(
        lambda x: ck.checkify(jax.nn.relu, errors=ck.nan_checks)(x)[1])(0.)),
    "custom_vjp_error": lambda jax, jnp, ck, lax: _get(
        ck.checkify(_custom_vjp(jax, jnp, ck))(-1.)),
    "custom_vjp_grad": lambda jax, jnp, ck, lax: float(jax.grad(
        lambda x: ck.checkify(_custom_vjp(jax, jnp, ck))(x)[1])(1.)),
    "custom_jvp_error": lambda jax, jnp, ck, lax: _get(
        ck.checkify(_custom_jvp(jax, jnp, ck))(-1.)),
    "custom_jvp_grad": lambda jax, jnp, ck, lax: float(jax.grad(
        lambda x: ck.checkify(_custom_jvp(jax, jnp, ck))(x)[1])(1.)),
    "custom_jvp_jvp": lambda jax, jnp, ck, lax: [float(v) for v in jax.jvp(
        lambda x: ck.checkify(_custom_jvp(jax, jnp, ck))(x)[1], (1.,), (1.,))],
    "checkify_grad_custom_jvp": lambda jax, jnp, ck, lax: float(
        ck.checkify(jax.grad(_custom_jvp(jax, jnp, ck)))(1.)[1]),
    # check_error
    "check_error_rechecked": lambda jax, jnp, ck, lax: _get(
        ck.checkify(_recheck(jnp, ck))(jnp.array([-1.]))),
    "check_error_eager": lambda jax, jnp, ck, lax: ck.check_error(
        ck.checkify(_pos(jnp, ck))(jnp.array([-1.]))[0]),
    "check_error_under_jit": lambda jax, jnp, ck, lax: jax.jit(_recheck(jnp, ck))(
        jnp.array([-1.])),
    "check_error_batched": lambda jax, jnp, ck, lax: _get(ck.checkify(_recheck_batched(
        jax, jnp, ck))(jnp.array([1., -2., -3., 4.]))),
    "check_error_batched_ok": lambda jax, jnp, ck, lax: _get(ck.checkify(_recheck_batched(
        jax, jnp, ck))(jnp.array([1., 2.]))),
    "check_error_type": lambda jax, jnp, ck, lax: ck.check_error(3),
    # automatic checks
    "nan_sin": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x: jnp.sin(x) + x[jnp.array(5)], errors=ck.all_checks)(jnp.array([1., jnp.inf]))),
    "nan_mul": lambda jax, jnp, ck, lax: _get(
        ck.checkify(lambda x: x * 0., errors=ck.nan_checks)(jnp.float32(jnp.inf))),
    "nan_dot": lambda jax, jnp, ck, lax: _get(ck.checkify(lambda x: x @ x, errors=ck.nan_checks)(
        jnp.array([jnp.nan, 1.]))),
    "nan_rem": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x, y: x % y, errors=ck.float_checks)(jnp.array([4., 2.]), jnp.array([2., 0.]))),
    "nan_softplus": lambda jax, jnp, ck, lax: _get(ck.checkify(
        jax.nn.softplus, errors=ck.nan_checks)(jnp.array([1., jnp.nan]))),
    "no_nan": lambda jax, jnp, ck, lax: _get(ck.checkify(
        jax.nn.logsumexp, errors=ck.float_checks)(jnp.array([1., 2.]))),
    "div_int": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x, y: x // y, errors=ck.div_checks)(jnp.array([4, 2]), jnp.array([2, 0]))),
    "div_float": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x, y: x / y, errors=ck.all_checks)(jnp.array([1., 0.]), jnp.array([1., 0.]))),
    "div_ok": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x, y: x // y, errors=ck.div_checks)(jnp.array([4, 2]), jnp.array([2, 1]))),
    "div_jit": lambda jax, jnp, ck, lax: _get(jax.jit(ck.checkify(
        lambda x, y: x // y, errors=ck.div_checks))(jnp.array([1, 2]), jnp.array([1, 0]))),
    "div_values": lambda jax, jnp, ck, lax: np.asarray(jax.jit(ck.checkify(
        lambda x, y: x // y, errors=ck.div_checks))(jnp.array([4, 2]), jnp.array([2, 1]))[1]
    ).tolist(),
    "index_dynamic_slice": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x, i: x[i], errors=ck.index_checks)(jnp.array([1., 2.]), jnp.array(5))),
    "index_gather": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x, i: x[i], errors=ck.index_checks)(jnp.arange(4.), jnp.array([0, 7, 9]))),
    "index_gather_2d": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x, i: x[i, 1], errors=ck.index_checks)(jnp.ones((3, 4)), jnp.array([0, 2, 5]))),
    "index_dynamic_update_slice": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x, i: lax.dynamic_update_slice(x, jnp.ones(2), (i,)),
        errors=ck.index_checks)(jnp.zeros(5), jnp.int32(4))),
    "index_negative_start": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 2)), errors=ck.index_checks)(
        jnp.zeros((5, 3)), jnp.int32(-1))),
    "index_scatter": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x, i: x.at[i].set(1.), errors=ck.index_checks)(jnp.zeros(5), jnp.array([1, 6]))),
    # the Error object and bad input
    "error_str": lambda jax, jnp, ck, lax: str(ck.checkify(_pos(jnp, ck))(jnp.array([-2.]))[0]),
    "error_str_none": lambda jax, jnp, ck, lax: str(
        ck.checkify(_pos(jnp, ck))(jnp.array([2.]))[0]),
    "get_exception": lambda jax, jnp, ck, lax: type(
        ck.checkify(_pos(jnp, ck))(jnp.array([-2.]))[0].get_exception()).__name__,
    "batched_exception": lambda jax, jnp, ck, lax: type(jax.vmap(ck.checkify(_pos(jnp, ck)))(
        jnp.array([[1.], [-1.]]))[0].get_exception()).__name__,
    "throw": lambda jax, jnp, ck, lax: ck.checkify(_pos(jnp, ck))(jnp.array([-2.]))[0].throw(),
    "throw_no_error": lambda jax, jnp, ck, lax: ck.checkify(jnp.sin)(1.)[0].throw(),
    "pytree_output": lambda jax, jnp, ck, lax: ck.checkify(
        lambda d: {"a": _pos(jnp, ck)(d["x"])})({"x": jnp.array([-2.])})[1]["a"].shape,
    "error_leaves": lambda jax, jnp, ck, lax: len(jax.tree_util.tree_leaves(ck.checkify(
        _nan_then_user(jnp, ck), errors=ck.all_checks)(jnp.float32(1.))[0])),
    "check_eager_ok": lambda jax, jnp, ck, lax: ck.check(jnp.bool_(True), "fine"),
    "check_eager_fails": lambda jax, jnp, ck, lax: ck.check(
        jnp.array(False), "eager {} {y}", jnp.float32(2.), y=jnp.int32(3)),
    "check_under_jit": lambda jax, jnp, ck, lax: jax.jit(
        lambda x: (ck.check(x > 0, "x"), x)[1])(jnp.float32(1.)),
    "check_under_eager_grad_ok": lambda jax, jnp, ck, lax: float(jax.grad(
        _grad_fn(jnp, ck))(1.)),
    "check_under_eager_grad_fails": lambda jax, jnp, ck, lax: jax.grad(
        _grad_fn(jnp, ck))(-1.),
    "check_under_eager_jvp_fails": lambda jax, jnp, ck, lax: jax.jvp(
        _grad_fn(jnp, ck), (-1.,), (1.,)),
    "check_under_jit_of_grad": lambda jax, jnp, ck, lax: jax.jit(jax.grad(
        _grad_fn(jnp, ck)))(1.),
    "check_nonscalar_pred": lambda jax, jnp, ck, lax: ck.check(jnp.array([True, False]), "x"),
    "check_numpy_pred": lambda jax, jnp, ck, lax: ck.check(np.array(True), "x"),
    "check_int_pred": lambda jax, jnp, ck, lax: ck.check(jnp.array(1), "x"),
    "check_python_fmt_arg": lambda jax, jnp, ck, lax: ck.checkify(
        lambda x: ck.check(x > 0, "{}", 3))(jnp.float32(1.)),
    "check_static_false_pred": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x, i: (ck.check(i >= 0, "index needs to be non-negative!"), x)[1])(
        jnp.ones(3), -1)),
    "static_string_argument": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x, mode, n: (ck.check(x > n, mode + " {}", x), x * n)[1])(
        jnp.float32(1.), "small", 2)),
    "debug_check_outside": lambda jax, jnp, ck, lax: float(jax.jit(
        lambda x: (ck.debug_check(x > 0, "dbg"), x)[1])(jnp.float32(-1.))),
    "debug_check_inside": lambda jax, jnp, ck, lax: _get(ck.checkify(
        lambda x: (ck.debug_check(x > 0, "dbg"), x)[1])(jnp.float32(-1.))),
}


def outcome(case, modules):
    """('ok', value) or ('raised', exception class names (with bases), message)."""
    try:
        return ("ok", CASES[case](*modules))
    except Exception as e:      # noqa: BLE001 - the exception is what is compared
        return ("raised", [c.__name__ for c in type(e).__mro__], str(e))


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_jax(case):
    theirs, mine = outcome(case, JAX), outcome(case, MJAX)
    if theirs[0] == "raised":
        assert mine[0] == "raised", f"jax raised {theirs[1][0]}: {theirs[2]}; mjax gave {mine}"
        assert theirs[1][0] in mine[1], (theirs, mine)
        assert theirs[2] in mine[2], (theirs, mine)   # mjax may prefix the user's line
        return
    assert mine == theirs


def test_error_names_and_sets():
    for name in ("user_checks", "nan_checks", "index_checks", "div_checks", "float_checks",
                 "automatic_checks", "all_checks"):
        assert len(getattr(mck, name)) == len(getattr(jck, name)), name
    assert mck.float_checks == mck.nan_checks | mck.div_checks
    assert mck.all_checks == mck.automatic_checks | mck.user_checks
    assert issubclass(mck.JaxRuntimeError, ValueError)
    assert mck.init_error.get() is None


def test_checkify_emits_the_transformation_op():
    def f(x):
        mck.check(x > 0, "neg {}", x)
        return mjnp.sin(x)
    ir_text = str(mjax.jit(mck.checkify(f, errors=mck.all_checks)).trace(1.).jaxpr.mlir)
    assert '"jaxpr.checkify"' in ir_text and '"jaxpr.check"' in ir_text
    assert 'errors = ["user", "nan", "index", "div"]' in ir_text
    hlo = mjax.jit(mck.checkify(f, errors=mck.all_checks)).lower(1.).as_text()
    assert "jaxpr." not in hlo and "stablehlo" in hlo


def test_check_outside_checkify_names_the_users_line():
    def f(x):
        mck.check(x > 0, "neg")
        return x
    with pytest.raises(ValueError, match=r"test_checkify.py:\d+:\d+: error: Cannot "
                                         r"abstractly evaluate a checkify.check"):
        mjax.jit(f)(1.)


def test_outputs_match_jax():
    def f(x):
        mck.check(mjnp.all(x > -5), "x={}", x)
        return mjnp.cumsum(mjnp.sin(x) * x)

    def g(x):
        jck.check(jjnp.all(x > -5), "x={}", x)
        return jjnp.cumsum(jjnp.sin(x) * x)
    x = np.linspace(-3, 3, 7).astype(np.float32)
    _, mine = mjax.jit(mck.checkify(f, errors=mck.all_checks))(x)
    _, theirs = jax.jit(jck.checkify(g, errors=jck.all_checks))(x)
    np.testing.assert_allclose(np.asarray(mine), np.asarray(theirs), rtol=1e-6)


def _negative_gradient_guard(lib, ck):
    @lib.custom_vjp
    def guard(x):
        return x

    def bwd(_, g):
        ck.check(g < 0, "gradient {} must be negative", g)
        return (g,)
    guard.defvjp(lambda x: (guard(x), None), bwd)
    return guard


def _outcome(fn):
    try:
        return np.asarray(fn()).tolist()
    except Exception as e:  # noqa: BLE001 - the class and message are compared
        return type(e).__name__, isinstance(e, ValueError), str(e)


@pytest.mark.parametrize("how", ["grad", "grad_negated", "vjp", "vjp_negative_ct",
                                 "vmap_grad", "jit_grad", "checkify_grad", "vmap_check"])
def test_check_in_a_bwd_rule_of_eager_differentiation_raises_when_it_runs(how):
    """JAX evaluates an eager grad/vjp op by op: a check in a custom_vjp's bwd rule raises
    checkify's JaxRuntimeError when the pullback runs (under jit it is the
    functionalization error, under checkify an Error)."""
    def run(lib, ck):
        guard = _negative_gradient_guard(lib, ck)
        cases = {
            "grad": lambda: lib.grad(guard)(-1.),
            "grad_negated": lambda: lib.grad(lambda x: -guard(x))(-1.),
            # (an array cotangent: JAX hands the rule the cotangent as it is given)
            "vjp": lambda: lib.vjp(guard, 2.)[1](lib.numpy.asarray(3.))[0],
            "vjp_negative_ct": lambda: lib.vjp(guard, 2.)[1](lib.numpy.asarray(-3.))[0],
            "vmap_grad": lambda: lib.vmap(lib.grad(guard))(np.ones(3, np.float32)),
            "jit_grad": lambda: lib.jit(lib.grad(guard))(-1.),
            "checkify_grad": lambda: ck.checkify(lib.grad(guard))(-1.)[0].get(),
            # (a check on a batched value: JAX checks the whole batch when vmap runs)
            "vmap_check": lambda: lib.vmap(lambda x: (ck.check(x > 0, "x={x}", x=x), x)[1])(
                np.array([1., -2., 3.], np.float32))}
        return _outcome(cases[how])
    mine, theirs = run(mjax, mck), run(jax, jck)
    if how == "jit_grad":   # (a ValueError of mjax's class, its message naming the line)
        assert mine[1] and theirs[1] and theirs[2] in mine[2]
    else:
        assert mine == theirs


def test_eager_checks_failing_in_threads_at_once_each_raise_their_own():
    """A failing run-time check's error goes to the call that ran it, found by its text:
    eager grads failing at the same time in several threads each raise their own."""
    import threading

    def guard_with(k):
        @mjax.custom_vjp
        def guard(x):
            return x

        def bwd(_, g):
            mck.check(g < 0, f"thread {k}: gradient {{}} must be negative", g)
            return (g,)
        guard.defvjp(lambda x: (guard(x), None), bwd)
        return guard
    guards = [guard_with(k) for k in range(4)]
    for g in guards:       # (compiled before the threads start)
        with pytest.raises(Exception):
            mjax.grad(g)(1.)
    barrier, got = threading.Barrier(4), {}

    def run(k):
        barrier.wait()
        for _ in range(10):
            try:
                mjax.grad(guards[k])(1.)
            except Exception as e:  # noqa: BLE001 - the message is compared
                got.setdefault(k, set()).add(str(e).splitlines()[0])
    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == {k: {f"thread {k}: gradient 1.0 must be negative (`check` failed)"}
                   for k in range(4)}
