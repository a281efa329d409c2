"""grad & co. called outside jit see concrete values, as in JAX: Python control flow on
differentiated values works (JAX differentiates the branch taken), while jit, vmap,
control-flow bodies and checkpoint still raise JAX's tracer errors. Every case runs
with real jax and with mjax; values and error classes must agree."""
from __future__ import annotations

import operator

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mjnp

BOTH = [(jax, jjnp), (mjax, mjnp)]


def _run(case):
    """(jax's outcome, mjax's outcome): ("ok", value) or ("error", exception class)."""
    outs = []
    for lib, jnp in BOTH:
        try:
            outs.append(("ok", case(lib, jnp)))
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            outs.append(("error", type(e)))
    return outs


def _to_numpy(x):
    if isinstance(x, (tuple, list)):
        return [_to_numpy(v) for v in x]
    if isinstance(x, dict):
        return {k: _to_numpy(v) for k, v in x.items()}
    return x if isinstance(x, (bool, int, float, complex, str, type(None))) else np.asarray(x)


def check_same(case):
    theirs, mine = _run(case)
    if theirs[0] == "error":
        assert mine[0] == "error", f"jax raised {theirs[1].__name__}; mjax returned {mine[1]}"
        names = [c.__name__ for c in mine[1].__mro__]
        assert theirs[1].__name__ in names, (theirs[1], mine[1])
        return None
    assert mine[0] == "ok", f"jax returned {theirs[1]}; mjax raised {mine[1].__name__}"
    _assert_equal(_to_numpy(mine[1]), _to_numpy(theirs[1]))
    return mine[1]


def _assert_equal(mine, theirs):
    if isinstance(theirs, dict):
        assert isinstance(mine, dict) and mine.keys() == theirs.keys()
        for k in theirs:
            _assert_equal(mine[k], theirs[k])
    elif isinstance(theirs, list):
        assert isinstance(mine, list) and len(mine) == len(theirs)
        for a, b in zip(mine, theirs):
            _assert_equal(a, b)
    elif isinstance(theirs, (bool, int, float, complex, str, type(None))):
        assert type(mine) is type(theirs) and mine == theirs, (mine, theirs)
    else:
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


def piecewise(x):
    if x < 3:
        return 3. * x ** 2
    else:
        return -4 * x


def doubling(x):
    while x < 10:
        x = x * 2
    return x


# ---- Python control flow on values -----------------------------------------------------
@pytest.mark.parametrize("x", [2., 4., 3.])
def test_grad_takes_the_branch_of_the_value(x):
    check_same(lambda lib, jnp: lib.grad(piecewise)(x))


def test_repeated_calls_follow_each_value():
    # The first call's program depends on its value: later calls must not reuse it.
    check_same(lambda lib, jnp: [lib.grad(piecewise)(v) for v in (2., 4., 2., 4.)])
    g = mjax.grad(piecewise)
    assert [float(g(v)) for v in (2., 4., 2., 4.)] == [12., -4., 12., -4.]


def test_while_loop_on_a_value():
    check_same(lambda lib, jnp: [lib.grad(doubling)(v) for v in (3., 0.5, 11.)])


def test_value_and_grad_and_has_aux():
    def f(x):
        if x > 0:
            return x ** 3, {"sign": x * 0 + 1}
        return x ** 2, {"sign": x * 0 - 1}
    check_same(lambda lib, jnp: lib.value_and_grad(piecewise)(4.))
    check_same(lambda lib, jnp: lib.value_and_grad(f, has_aux=True)(2.))
    check_same(lambda lib, jnp: lib.grad(f, has_aux=True)(-2.))


@pytest.mark.parametrize("x", [2., 4.])
def test_forward_and_reverse_apis(x):
    check_same(lambda lib, jnp: lib.jvp(piecewise, (x,), (1.,)))
    check_same(lambda lib, jnp: lib.vjp(piecewise, x)[1](1.))
    check_same(lambda lib, jnp: lib.linearize(piecewise, x)[1](2.))
    check_same(lambda lib, jnp: lib.jacfwd(piecewise)(x))
    check_same(lambda lib, jnp: lib.jacrev(piecewise)(x))
    check_same(lambda lib, jnp: lib.hessian(piecewise)(x))


def test_array_inputs_and_reductions():
    def f(x):
        return x ** 3 if x.sum() > 0 else x ** 2
    check_same(lambda lib, jnp: lib.jacrev(f)(jnp.ones(3)))
    check_same(lambda lib, jnp: lib.jacfwd(f)(-jnp.ones(3)))
    check_same(lambda lib, jnp: lib.grad(lambda x: f(x).sum())(jnp.arange(3.) - 2))


def test_nested_derivatives():
    check_same(lambda lib, jnp: [lib.grad(lib.grad(piecewise))(v) for v in (2., 4.)])
    for v in (2., -2.):
        check_same(lambda lib, jnp: lib.grad(lambda x: _branch_on_inner_grad(lib, x))(v))


def _branch_on_inner_grad(lib, x):
    # branching on a derivative computed inside the differentiated function
    slope = lib.grad(lambda y: y ** 3 if y > 0 else -y)(x)
    return x ** 2 if slope > 0 else x ** 3


def test_branch_on_a_nested_jit_result():
    def f(lib, x):
        y = lib.jit(lambda z: z * 2.)(x)
        return x ** 2 if y > 1 else x ** 3
    check_same(lambda lib, jnp: [lib.grad(lambda x: f(lib, x))(v) for v in (2., 0.25)])


def test_vjp_of_a_branching_function_crosses_jit():
    # The JAX tutorial's case: the vjp function, traced on the branch taken, under jit.
    def f(x):
        try:
            if x < 3:
                return 2 * x ** 3
            else:
                raise ValueError
        except ValueError:
            return np.pi * x
    def case(lib, jnp):
        y, f_vjp = lib.vjp(f, 4.)
        return y, lib.jit(f_vjp)(1.)
    check_same(case)


def test_closure_and_non_differentiated_arguments():
    c = 1.
    check_same(lambda lib, jnp: lib.grad(lambda x: x * (2. if jnp.float32(c) > 0 else 3.))(1.))

    def f(x, scale):
        # scale is not differentiated: JAX gives it as a concrete array
        return x * float(scale.sum()) if np.asarray(scale)[0] > 0 else -x
    check_same(lambda lib, jnp: lib.grad(f)(1., jnp.ones(2)))
    check_same(lambda lib, jnp: lib.grad(f, argnums=0)(1., -jnp.ones(2)))


def _random_branch(lib, jnp, x, key):
    u = lib.random.normal(lib.random.fold_in(key, 3))
    return x * 2 if u * x > 0.0 else x * 3


def _loop_results(lib, jnp, x):
    y = lib.lax.cond(x > 0, lambda v: v * 2, lambda v: v * -1, x)
    z, _ = lib.lax.scan(lambda c, _: (c * 2, None), x, None, length=3)
    return x * y if z > 10 else x * 3


def _unrolled(lib, jnp, x):
    for _ in range(int(jnp.floor(x))):
        x = x * 1.5
    return x


MIXED = {
    # values computed by key ops, control-flow ops, sorting: evaluated for Python
    "random_key_argument": lambda lib, jnp: [
        lib.grad(lambda x, k: _random_branch(lib, jnp, x, k))(v, lib.random.key(0))
        for v in (1., -1.)],
    "random_key_closure": lambda lib, jnp: lib.grad(
        lambda x: _random_branch(lib, jnp, x, lib.random.key(1)))(1.),
    "cond_and_scan_results": lambda lib, jnp: [
        lib.grad(lambda x: _loop_results(lib, jnp, x))(v) for v in (1., 2., -1.)],
    "python_loop_count": lambda lib, jnp: [
        lib.grad(lambda x: _unrolled(lib, jnp, x))(v) for v in (3.5, 1.2)],
    "pytree_argument": lambda lib, jnp: lib.grad(
        lambda p: (p["w"] * 2).sum() if p["b"] > 0 else p["w"].sum())(
            {"w": jnp.ones(2), "b": 1.}),
    "argnums_tuple": lambda lib, jnp: lib.grad(
        lambda x, y: x * y if x > y else x + y, argnums=(0, 1))(2., 1.),
    # transformations of transformations, each seeing the branch's values
    "jvp_of_grad": lambda lib, jnp: lib.jvp(
        lib.grad(lambda x: x ** 3 if x > 0 else x), (2.,), (1.,)),
    "vjp_of_jacfwd": lambda lib, jnp: lib.vjp(
        lib.jacfwd(lambda x: x ** 3 if x > 0 else x), 2.)[1](1.),
    "linearize_of_grad": lambda lib, jnp: lib.linearize(
        lib.grad(lambda x: x ** 3 if x > 0 else x), 2.)[1](1.),
    "grad_of_vjp": lambda lib, jnp: lib.grad(lambda x: lib.vjp(
        lambda y: y ** 3 if y > 0 else y, x)[1](1.)[0])(2.),
    "grad_of_branch_on_hessian": lambda lib, jnp: lib.grad(lambda x: x * (
        2. if lib.hessian(lambda y: y ** 3 if y > 0 else y ** 2)(x) > 0 else 1.))(1.),
}


@pytest.mark.parametrize("name", sorted(MIXED))
def test_values_from_other_ops_and_transforms(name):
    check_same(MIXED[name])


def test_under_disable_jit():
    # JAX runs everything in Python there, nested jit included: branches work inside it.
    def case(lib, jnp):
        with lib.disable_jit():
            return [lib.grad(piecewise)(2.), lib.grad(lib.jit(piecewise))(4.),
                    lib.vmap(lib.grad(lambda x: x ** 3))(jnp.arange(3.)),
                    lib.jacrev(lib.jit(doubling))(3.)]
    check_same(case)


# ---- which conversions JAX allows on a traced value -------------------------------------
CONVERSIONS = {
    "bool": bool,
    "int": int,
    "float": float,
    "complex": complex,
    "index": operator.index,
    "item": lambda v: v.item(),
    "tolist": lambda v: v.tolist(),
    "asarray": np.asarray,
    "list_index": lambda v: [10, 11, 12, 13][v],
    "range": lambda v: list(range(v)),
}


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
@pytest.mark.parametrize("make", ["float", "int", "bool", "vector1", "stopped"])
def test_conversions_inside_grad(name, make):
    conv = CONVERSIONS[name]

    def case(lib, jnp):
        seen = []     # what Python got (aux outputs would come back as arrays)

        def f(x):
            v = {"float": x, "int": x.astype(jnp.int32), "bool": x > 1,
                 "vector1": jnp.ones(1) * x, "stopped": lib.lax.stop_gradient(x)}[make]
            seen.append(conv(v))
            return x * 2.
        lib.grad(f)(jnp.float32(2.))     # (on a Python float, JAX's primals vary in type)
        return seen
    check_same(case)


def test_zero_derivative_values_follow_the_rule_table(monkeypatch):
    # float() of floor(x) under grad works because floor's derivative is zero (JAX holds
    # no tangent for it). The frontend reads that from the passes' ZERO_DERIVATIVE
    # column, the one statement of it: without floor's entry, float() refuses.
    from mjax.dialect.ops.elementwise import FloorOp
    from mjax.passes.rules.tables import ZERO_DERIVATIVE

    def f(x, jnp=mjnp):
        return x * float(jnp.floor(x))
    assert float(mjax.grad(f)(2.5)) == float(jax.grad(lambda x: f(x, jjnp))(2.5)) == 2.0
    monkeypatch.delitem(ZERO_DERIVATIVE.rules, FloorOp)
    with pytest.raises(mjax.errors.ConcretizationTypeError):
        mjax.grad(f)(3.5)


@pytest.mark.parametrize("name", ["bool", "int", "index", "item", "float"])
def test_conversions_inside_jvp(name):
    conv = CONVERSIONS[name]

    def case(lib, jnp):
        seen = []

        def f(x):
            seen.append(conv(x.astype(jnp.int32) if name == "index" else x))
            return x * 2.
        lib.jvp(f, (2.,), (1.,))
        return seen
    check_same(case)


# ---- custom rules -----------------------------------------------------------------------
def _custom_jvp_fn(lib, jnp):
    @lib.custom_jvp
    def f(x):
        if x > 0:
            return jnp.sin(x)
        else:
            return jnp.cos(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        x_dot, = tangents
        ans = f(x)
        if x > 0:
            return ans, 2 * x_dot
        else:
            return ans, 3 * x_dot
    return f


def _custom_vjp_fn(lib, jnp):
    @lib.custom_vjp
    def f(x):
        return x * 2. if x > 0 else x * 3.

    def fwd(x):
        return (x * 2., x) if x > 0 else (x * 3., x)

    def bwd(r, ct):
        return (10. * ct,) if r > 0 else (20. * ct,)
    f.defvjp(fwd, bwd)
    return f


@pytest.mark.parametrize("x", [1., -1.])
def test_custom_jvp_with_python_ifs(x):
    check_same(lambda lib, jnp: lib.grad(_custom_jvp_fn(lib, jnp))(x))
    check_same(lambda lib, jnp: lib.jvp(_custom_jvp_fn(lib, jnp), (x,), (jnp.float32(1.),)))
    check_same(lambda lib, jnp: lib.grad(lambda y: _custom_jvp_fn(lib, jnp)(y) * y)(x))
    check_same(lambda lib, jnp: _custom_jvp_fn(lib, jnp)(jnp.float32(x)))


@pytest.mark.parametrize("x", [1., -1.])
def test_custom_vjp_with_python_ifs(x):
    check_same(lambda lib, jnp: lib.grad(_custom_vjp_fn(lib, jnp))(x))
    check_same(lambda lib, jnp: lib.vjp(_custom_vjp_fn(lib, jnp), x)[1](jnp.float32(1.)))
    check_same(lambda lib, jnp: _custom_vjp_fn(lib, jnp)(jnp.float32(x)))


# ---- where JAX still raises -------------------------------------------------------------
RAISING = {
    "jit_of_grad": lambda lib, jnp: lib.jit(lib.grad(piecewise))(2.),
    "grad_of_jit": lambda lib, jnp: lib.grad(lib.jit(piecewise))(2.),
    "vmap_of_grad": lambda lib, jnp: lib.vmap(lib.grad(piecewise))(jnp.ones(3)),
    "vmap_of_jacfwd": lambda lib, jnp: lib.vmap(lib.jacfwd(piecewise))(jnp.ones(3)),
    "grad_of_checkpoint": lambda lib, jnp: lib.grad(lib.checkpoint(piecewise))(2.),
    "make_jaxpr": lambda lib, jnp: lib.make_jaxpr(lib.grad(piecewise))(2.),
    "eval_shape": lambda lib, jnp: lib.eval_shape(lib.grad(piecewise), 2.),
    "cond_branch": lambda lib, jnp: lib.grad(lambda x: lib.lax.cond(
        x > 0, lambda y: y * 2 if y > 0 else y, lambda y: y, x))(1.),
    "fori_body": lambda lib, jnp: lib.grad(lambda x: lib.lax.fori_loop(
        0, 3, lambda i, y: y * 2 if y > 0 else y, x))(1.),
    "jit_of_custom_jvp": lambda lib, jnp: lib.jit(_custom_jvp_fn(lib, jnp))(1.),
    "float_of_tracer": lambda lib, jnp: lib.grad(lambda x: x * float(x))(2.),
    "asarray_of_tracer": lambda lib, jnp: lib.grad(lambda x: x * np.asarray(x))(2.),
    "int_under_jit": lambda lib, jnp: lib.jit(lib.grad(lambda x: x * int(x)))(2.),
    "index_under_vmap": lambda lib, jnp: lib.vmap(lib.grad(
        lambda x: x * [1., 2., 3.][x.astype(jnp.int32)]))(jnp.ones(2)),
}


@pytest.mark.parametrize("name", sorted(RAISING))
def test_still_raises_where_jax_does(name):
    theirs, mine = _run(RAISING[name])
    assert theirs[0] == "error", "the case must raise in JAX"
    check_same(RAISING[name])


def test_error_classes_under_jit():
    with pytest.raises(mjax.errors.TracerBoolConversionError):
        mjax.jit(mjax.grad(piecewise))(2.)
    with pytest.raises(mjax.errors.ConcretizationTypeError):
        mjax.jit(mjax.grad(lambda x: x * int(x)))(2.)
    with pytest.raises(mjax.errors.TracerIntegerConversionError):
        mjax.vmap(mjax.grad(lambda x: x * [1., 2.][x.astype(mjnp.int32)]))(mjnp.ones(2))


# ---- costs nothing when unused ------------------------------------------------------------
def test_value_independent_functions_compile_once():
    calls = []

    def f(x):
        calls.append(1)
        return mjnp.sin(x) * x
    g = mjax.grad(f)
    for v in (1., 2., 3.):
        np.testing.assert_allclose(g(v), np.cos(v) * v + np.sin(v), rtol=1e-5)
    # traced on every call, as JAX runs it; the compiled program is reused
    # (test_eager_rerun.py counts the lowerings)
    assert len(calls) == 3

    calls.clear()
    h = mjax.grad(lambda x: f(x) if x > 0 else -f(x))
    for v in (1., 2., -1.):
        np.testing.assert_allclose(h(v), np.sign(v) * (np.cos(v) * v + np.sin(v)), rtol=1e-5)
    assert len(calls) == 3      # depends on the value: traced on every call, as JAX runs it
