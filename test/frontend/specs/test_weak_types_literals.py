"""JAX-compatibility fixes, each checked against jax: weak types of jax.numpy binary
functions with a Python scalar, Array methods on trace-time literals, index dtypes of
dynamic slices under x64, tree_util.default_registry."""
import dataclasses

import numpy as np
import pytest

import jax
import jax.numpy as jnp
import mjax
import mjax.numpy as mnp


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64(request):
    old = (jax.config.jax_enable_x64, mjax.config.read("jax_enable_x64"))
    jax.config.update("jax_enable_x64", request.param)
    mjax.config.update("jax_enable_x64", request.param)
    yield request.param
    jax.config.update("jax_enable_x64", old[0])
    mjax.config.update("jax_enable_x64", old[1])


BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power",
          "float_power", "remainder", "mod", "fmod", "maximum", "minimum", "fmax", "fmin",
          "arctan2", "hypot", "logaddexp", "logaddexp2", "copysign", "nextafter",
          "heaviside", "equal", "not_equal", "less", "greater", "less_equal",
          "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and",
          "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "gcd", "lcm", "divmod",
          "isclose", "where_x", "where_y"]
DTYPES = ["float32", "int32", "bfloat16", "float16", "uint8", "bool", "complex64"]
SCALARS = [2, 2.5, True, 1j]
BOOL_ARITHMETIC = {"power", "remainder", "mod", "fmod", "left_shift", "right_shift",
                   "floor_divide", "divmod"}


def _known_difference(name, dtype, scalar, side, got):
    """Cells where mjax still differs from JAX, for a reason other than weak types: a
    reason string, or None (then the cell must match)."""
    if dtype == "bool" and name in BOOL_ARITHMETIC and (got == "error" or scalar is True):
        return "bool ** / % / << / // bool: JAX computes in int32, mjax raises or widens"
    if name == "power" and side == 1 and dtype in ("int32", "uint8", "bool"):
        return "JAX's power keeps an integer exponent array: pow(weak float, int32) is strong"
    if name == "heaviside" and side == 0 and dtype in ("int32", "uint8", "bool"):
        return "JAX's heaviside result is strong when x1 is promoted from an integer"
    return None


def _fn(np_, name, side):
    if name == "where_x":
        return lambda a, s: np_.where(np_.ones(a.shape, bool), s, a)
    if name == "where_y":
        return lambda a, s: np_.where(np_.ones(a.shape, bool), a, s)
    f = getattr(np_, name)
    return (lambda a, s: f(a, s)) if side == 0 else (lambda a, s: f(s, a))


def _result(lib, np_, name, side, dtype, scalar):
    def run(a):
        r = _fn(np_, name, side)(a, scalar)
        return r[0] if isinstance(r, tuple) else r
    try:
        out = lib.eval_shape(run, lib.ShapeDtypeStruct((3,), np.dtype(dtype)
                                                       if dtype != "bfloat16"
                                                       else np_.bfloat16))
    except Exception:
        return "error"
    return str(np.dtype(out.dtype)), bool(getattr(out, "weak_type", False))


@pytest.mark.parametrize("name", BINARY)
def test_binary_scalar_weak_types_match_jax(x64, name):
    bad = []
    for dtype in DTYPES:
        for scalar in SCALARS:
            for side in (0, 1):
                want = _result(jax, jnp, name, side, dtype, scalar)
                if want == "error":
                    continue
                got = _result(mjax, mnp, name, side, dtype, scalar)
                if got != want and not _known_difference(name, dtype, scalar, side, got):
                    bad.append(f"{dtype} {scalar!r} side {side}: jax {want}, mjax {got}")
    assert not bad, "\n".join(bad)


def test_where_and_logaddexp_keep_weak_types():
    for lib, np_ in ((jax, jnp), (mjax, mnp)):
        x = np_.asarray(1.5)  # a weak float (from a Python float)
        assert lib.typeof(np_.where(x > 0, x, 0.0)).weak_type
        assert lib.typeof(np_.logaddexp(x, 1.0)).weak_type
        assert lib.typeof(lib.lax.lt(x, 2.0)).weak_type  # ~bool, as in JAX


LITERAL_CASES = {
    "at_set": lambda np_: np_.zeros(3).at[0].set(1.),
    "at_add": lambda np_: np_.arange(4.).at[1:3].add(2.),
    "T": lambda np_: np_.full((2, 3), 2.).T,
    "reshape": lambda np_: np_.ones((2, 3)).reshape(3, 2),
    "astype": lambda np_: np_.full((2,), 2.5).astype(np_.int32),
    "sum": lambda np_: np_.ones((2, 3)).sum(axis=0),
    "static": lambda np_: np_.float32(sum((lambda z: (z.shape[0], z.ndim, z.size))(
        np_.ones((2, 3))))),
    "index": lambda np_: np_.arange(5.)[2],
    "neg_index": lambda np_: np_.arange(5.)[-1],
    "max": lambda np_: np_.full((3,), 4.).max(),
    "ravel": lambda np_: np_.ones((2, 2)).ravel(),
    "dtype": lambda np_: np_.zeros(2, dtype=np_.ones(1, np_.int32).dtype),
}


@pytest.mark.parametrize("case", sorted(LITERAL_CASES))
def test_literal_array_methods_inside_jit(case):
    f = LITERAL_CASES[case]
    want = jax.jit(lambda: f(jnp))()
    got = mjax.jit(lambda: f(mnp))()
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_literal_indexed_by_traced_index():
    want = jax.jit(lambda i: jnp.arange(5.)[i] + jnp.zeros(3).at[i].set(1.).sum())(2)
    got = mjax.jit(lambda i: mnp.arange(5.)[i] + mnp.zeros(3).at[i].set(1.).sum())(2)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


DYNAMIC_CASES = {
    "dynamic_index_in_dim_0": lambda l, x, i: l.dynamic_index_in_dim(x, i, 0),
    "dynamic_index_in_dim_1": lambda l, x, i: l.dynamic_index_in_dim(x, i, 1, False),
    "dynamic_slice_in_dim": lambda l, x, i: l.dynamic_slice_in_dim(x, i, 2, 1),
    "dynamic_update_index_in_dim": lambda l, x, i: l.dynamic_update_index_in_dim(
        x, x[:1] * 0, i, 0),
    "dynamic_update_slice_in_dim": lambda l, x, i: l.dynamic_update_slice_in_dim(
        x, x[:, :2] * 0, i, 1),
    "getitem": lambda l, x, i: x[i],
    "at_set": lambda l, x, i: x.at[i].set(0.),
}


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64, np.uint8, np.int8])
@pytest.mark.parametrize("case", sorted(DYNAMIC_CASES))
def test_dynamic_index_dtypes_under_x64(x64, case, index_dtype):
    f = DYNAMIC_CASES[case]
    x = np.arange(12.).reshape(3, 4)
    i = index_dtype(1)
    want = jax.jit(lambda x, i: f(jax.lax, x, i))(x, i)
    got = mjax.jit(lambda x, i: f(mjax.lax, x, i))(x, i)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_default_registry_as_jax():
    tree = {"b": (1, 2), "a": [3, None]}
    for reg, tu in ((jax.tree_util.default_registry, jax.tree_util),
                    (mjax.tree_util.default_registry, mjax.tree_util)):
        leaves, treedef = reg.flatten(tree)
        assert leaves == [3, 1, 2]
        assert tu.tree_unflatten(treedef, leaves) == tree
        assert reg.flatten_one_level(5) is None
        children, _ = reg.flatten_one_level((1, (2, 3)))
        assert list(children) == [1, (2, 3)]
        assert reg.is_node(tuple) and reg.is_node(dict) and not reg.is_node(int)
        paths = [p for p, _ in reg.flatten_with_path(tree)[0]]
        assert tu.keystr(paths[0]) == "['a'][0]"

    @dataclasses.dataclass
    class Node:
        x: float
        op: str = mjax.tree.static(default="add")
    mjax.tree_util.register_dataclass(Node)
    assert mjax.tree_util.default_registry.is_node(Node)
    assert mjax.tree.leaves(Node(1.0)) == [1.0]


def test_complex_ordering_logaddexp_and_clip_as_jax():
    """jnp's ordering comparisons order complex numbers lexicographically (real, then
    imaginary part), logaddexp takes complex inputs, clip rejects them: as jax.numpy."""
    a = np.array([1 + 2j, 2 + 1j, 1 + 1j, 1 + 2j, np.nan + 0j], np.complex64)
    b = np.array([2 + 1j, 1 + 2j, 1 + 2j, 1 + 2j, 1 + 0j], np.complex64)
    for name in ("less", "less_equal", "greater", "greater_equal", "logaddexp"):
        got, want = getattr(mnp, name)(a, b), getattr(jnp, name)(a, b)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
        assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(mnp.asarray(a) < b), np.asarray(jnp.asarray(a) < b))
    np.testing.assert_array_equal(np.asarray(mjax.jit(mnp.less)(a, b)), np.asarray(jnp.less(a, b)))
    with pytest.raises(ValueError, match="Clip received a complex value"):
        mnp.clip(a, 1, 2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_traced_float_with_python_scalar_as_jax(dtype):
    """The traced fast path for a float array and a Python int/float: result types,
    values and printed jaxprs as JAX's, the scalar on either side."""
    x = np.linspace(-2, 2, 6).astype(jnp.dtype(dtype))
    fns = [lambda np_, a: a * 1.01 + 0.5 - a, lambda np_, a: 3 - a / 7,
           lambda np_, a: 2 ** a * -0.0, lambda np_, a: np_.maximum(a, 1)]
    for fn in fns:
        got = mjax.jit(lambda a: fn(mnp, a))(x)
        want = jax.jit(lambda a: fn(jnp, a))(x)
        assert str(got.dtype) == str(want.dtype) and got.weak_type == want.weak_type
        np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(want, np.float32))
    assert str(mjax.make_jaxpr(lambda a: a * 1.01 + 2)(x)) == str(
        jax.make_jaxpr(lambda a: a * 1.01 + 2)(x))


@pytest.mark.parametrize("fn,args", [
    (lambda np_, a, b: np_.array([a, b]), (1, 2.0)),
    (lambda np_, a, b: np_.asarray([a, [b]]), (np.ones(1, np.float32), 2)),
    (lambda np_, a, b: np_.array([[a, 1.0], [2, b]]), (np.float32(2), 3)),
    (lambda np_, a, b: np_.array((a, b), dtype=np_.int32), (np.float32(2), 1.5))])
def test_array_of_traced_elements_as_jax(fn, args):
    # (Common Gotchas: jnp.array of weak traced scalars is strongly typed, each element
    # converted before it is stacked)
    def run(lib, np_):
        out = lib.jit(lambda a, b: fn(np_, a, b))(*args)
        return (str(lib.make_jaxpr(lambda a, b: fn(np_, a, b))(*args)), out.dtype,
                out.weak_type, np.asarray(out).tolist())
    assert run(mjax, mnp) == run(jax, jnp)


@pytest.mark.parametrize("name, args", [("hypot", (3, 4)), ("hypot", (3.0, 4.0)),
                                        ("logaddexp2", (1.0, 2.0)), ("gcd", (12, 18)),
                                        ("lcm", (12, 18))])
def test_all_weak_operands_give_a_weak_result(name, args):
    # (weak Python scalars in, weak result out, as JAX 0.10.2's; a weak traced array too)
    for lib, np_ in ((mjax, mnp), (jax, jnp)):
        out = getattr(np_, name)(*args)
        assert out.weak_type, (lib.__name__, name)
        weak = lib.jit(lambda x: x)(args[0])
        assert getattr(np_, name)(weak, args[1]).weak_type, (lib.__name__, name)
        assert not getattr(np_, name)(np_.asarray(np.asarray(args[0])), args[1]).weak_type


def test_numpy_scalars_of_other_dtypes_are_other_eager_programs():
    # (the eager cache took np.float16(1) == np.float32(1) for the same static argument)
    a = mnp.ones(3, mnp.float16)
    assert mnp.divide(np.float32(1.0), a).dtype == jnp.divide(np.float32(1.0), jnp.ones(3, jnp.float16)).dtype
    assert mnp.divide(np.float16(1.0), a).dtype == np.float16
    assert str(mnp.divide(np.float16(-0.0), a)) == "[-0. -0. -0.]"


def test_functions_mixing_strong_constants_keep_jax_weak_types():
    # hypot, logaddexp2, gcd and lcm are weak only when every input is; heaviside when
    # x1 is weak and promotion gives a weak type (JAX builds them from typed constants)
    ints, bools = np.arange(1, 4, dtype=np.int32), np.array([True, False, True])
    cases = [(2., 3.), (ints, 2.5), (2.5, ints), (bools, 2), (2, bools), (ints, 2),
             (np.float32(2), 2.5), (2.5, np.float32(2))]
    for name in ["hypot", "logaddexp2", "heaviside", "gcd", "lcm"]:
        for args in cases:
            def kind(np_):
                try:
                    r = getattr(np_, name)(*[np_.asarray(a) if isinstance(a, np.ndarray)
                                             else a for a in args])
                except (TypeError, ValueError):
                    return "error"
                return str(r.dtype), bool(r.weak_type)
            assert kind(mnp) == kind(jnp), (name, args)
