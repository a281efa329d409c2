"""Behaviours the documentation pages' cells showed differing from JAX (issue 23), each
compared with real jax: pure_callback in shard_map bodies, the weak type of gradients,
debug_nans errors of eager jnp functions."""
import os
import traceback

import numpy as np
import pytest

import jax
import jax.numpy as jjnp
import mjax
import mjax.numpy as jnp

LIBS = {"mjax": (mjax, jnp), "jax": (jax, jjnp)}


def both(program):
    """program(lib, numpy module) for mjax, then jax."""
    return [program(*LIBS[name]) for name in ("mjax", "jax")]


# ---- pure_callback without vmap_method in a shard_map body: once per device -----------
def _callback_in_shard_map(shape, axes, spec, body_extra=None, jit=False):
    def program(lib, np_):
        calls = []

        def host(x):
            calls.append(np.shape(x))
            return np.asarray(x) * 2

        def f(x):
            y = lib.pure_callback(host, lib.ShapeDtypeStruct(x.shape, x.dtype), x)
            return y if body_extra is None else body_extra(y)
        mesh = lib.make_mesh(shape, axes)
        with lib.set_mesh(mesh):
            x = lib.device_put(np_.arange(float(np.prod(shape) * 2)).reshape(
                tuple(shape[:len(spec)]) + (-1,)), lib.P(*spec))
            g = lib.shard_map(f, in_specs=lib.P(*spec), out_specs=lib.P(*spec))
            out = (lib.jit(g) if jit else g)(x)
            out = np.asarray(out)
        return out, sorted(calls)
    return both(program)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_pure_callback_in_shard_map_runs_once_per_device(jit):
    (got, got_calls), (want, want_calls) = _callback_in_shard_map((8,), ("i",), ("i",),
                                                                  jit=jit)
    np.testing.assert_array_equal(got, want)
    assert got_calls == want_calls and len(got_calls) == 8


def test_pure_callback_in_shard_map_over_two_mesh_axes():
    (got, got_calls), (want, want_calls) = _callback_in_shard_map(
        (4, 2), ("i", "j"), ("i", "j"), body_extra=lambda y: y + 1)
    np.testing.assert_array_equal(got, want)
    assert got_calls == want_calls and len(got_calls) == 8


def test_pure_callback_in_pmap_runs_once_per_device():
    def program(lib, np_):
        calls = []

        def host(x):
            calls.append(np.shape(x))
            return np.asarray(x) * 2
        out = lib.pmap(lambda x: lib.pure_callback(
            host, lib.ShapeDtypeStruct(x.shape, x.dtype), x) + 1)(np_.arange(8.0))
        return np.asarray(out), sorted(calls)
    (got, got_calls), (want, want_calls) = both(program)
    np.testing.assert_array_equal(got, want)
    assert got_calls == want_calls and len(got_calls) == 8


def test_pure_callback_vmapped_in_shard_map_body_still_needs_vmap_method():
    def program(lib, np_):
        def f(x):
            return lib.vmap(lambda r: lib.pure_callback(
                lambda r: np.asarray(r), lib.ShapeDtypeStruct(r.shape, r.dtype), r))(x)
        mesh = lib.make_mesh((8,), ("i",))
        with lib.set_mesh(mesh):
            x = lib.device_put(np_.ones((8, 3)), lib.P("i"))
            with pytest.raises(NotImplementedError, match="vmap_method"):
                lib.shard_map(f, in_specs=lib.P("i"), out_specs=lib.P("i"))(x)
    both(program)


# ---- debug_nans on an eager jnp function: JAX's jits filter the traceback --------------
def _nan_error(lib, call):
    """(class name, message, notes, names of the frames of this file, files of the rest)
    of the FloatingPointError call() raises under jax_debug_nans."""
    # (the context manager, not config.update: a thread-local override wins over the
    # global value, and a tutorial page run earlier in this process can leave jax's
    # `debug_nans(False)` entered)
    with lib.debug_nans(True):
        try:
            call()
        except FloatingPointError as e:
            frames = traceback.extract_tb(e.__traceback__)
            return (type(e).__name__, str(e), getattr(e, "__notes__", None),
                    [f.name for f in frames if f.filename == __file__],
                    [f.filename for f in frames if f.filename != __file__])
    raise AssertionError("no FloatingPointError")


def _user_nan(lib, np_):
    def f(x):
        w = 3 * np_.square(x)
        return np_.log(-w)
    return _nan_error(lib, lambda: f(5.))


@pytest.mark.parametrize("program", [
    _user_nan,
    lambda lib, np_: _nan_error(lib, lambda: np_.sqrt(np_.float32(-1.0))),
    lambda lib, np_: _nan_error(lib, lambda: np_.zeros(2) / np_.zeros(2)),
    lambda lib, np_: _nan_error(lib, lambda: np_.divide(np_.zeros(2), np_.zeros(2))),
], ids=["page", "sqrt", "operator", "divide"])
def test_debug_nans_error_of_an_eager_jnp_function(program, capsys):
    got, want = both(program)
    assert got[:4] == want[:4]
    assert want[2] and "removed its internal frames" in want[2][0]
    # Below the user's lines only the jnp/lax functions stay (JAX: its jnp function),
    # none of the machinery that ran the op.
    # (and JAX's operator method: _operator_truediv in array_methods.py)
    assert all(os.sep + os.path.join("jax", "_src", "numpy") in f for f in want[4])
    # (mjax's package directory: frontend/ in the repository, mjax/ where installed)
    kept = [os.path.join(os.path.dirname(mjax.__file__), p)
            for p in ("numpy", "lax", "numpy/array_operators.py")]
    assert got[4] and all(any(k in f for k in kept) for f in got[4]), got[4]
    printed = capsys.readouterr().out
    assert printed.count("Calling the de-optimized version") == 2


def test_debug_nans_error_of_an_eager_lax_op_has_the_note():
    # JAX runs an eager primitive as a jit of its own: its note, its machinery's frames.
    got, want = both(lambda lib, np_: _nan_error(lib, lambda: lib.lax.log(np_.float32(-1.0))))
    assert got[:4] == want[:4]


# ---- the weak type of gradients: JAX's is the cotangent's own --------------------------
def _weak_cases(lib, np_):
    """name -> (function of lib's grad & co., argument)."""
    from_lib = lib.export
    f = lambda x: 7 * x * x * x                                       # noqa: E731
    rehydrated = from_lib.deserialize(from_lib.export(lib.jit(f))(1.).serialize(
        vjp_order=3)).call

    @lib.custom_vjp
    def weak_bwd(x):
        return x * 2
    weak_bwd.defvjp(lambda x: (x * 2, None), lambda r, ct: (ct * 2,))
    @lib.custom_jvp
    def custom_sin(x):
        return np_.sin(x)
    custom_sin.defjvp(lambda p, t: (custom_sin(p[0]), np_.cos(p[0]) * t[0]))
    scan = lambda x: lib.lax.scan(lambda c, _: (c * x, None), x, None, length=3)[0]  # noqa
    cond = lambda x: lib.lax.cond(x > 0, lambda x: x * 2, lambda x: x, x)             # noqa
    return {
        "plain": (lib.grad(f), 0.1),
        "sin": (lib.grad(np_.sin), 0.1),
        "strong factor": (lib.grad(lambda x: x * np_.float32(2)), 0.1),
        "astype": (lib.grad(lambda x: x.astype(np_.float32) * 2), 0.1),
        "sum": (lib.grad(lambda x: np_.sum(x * np_.ones(3))), 0.1),
        "where": (lib.grad(lambda x: np_.where(x > 0, x, 0.)), 0.1),
        "cond": (lib.grad(cond), 0.1),
        "scan": (lib.grad(scan), 0.1),
        "inner jit": (lib.grad(lib.jit(lambda x: x * np_.float32(1))), 0.1),
        "jit of grad": (lib.jit(lib.grad(f)), 0.1),
        "value_and_grad": (lambda x: lib.value_and_grad(f)(x)[1], 0.1),
        "jacrev": (lib.jacrev(f), 0.1),
        "jacfwd": (lib.jacfwd(f), 0.1),
        "constant": (lib.grad(lambda x: 1.0), 0.1),
        "strong input": (lib.grad(f), np_.float32(0.1)),
        "custom_vjp weak bwd": (lib.grad(weak_bwd), 0.1),
        "vjp weak ct": (lambda x: lib.vjp(f, x)[1](1.0)[0], 0.1),
        "vjp strong ct": (lambda x: lib.vjp(f, x)[1](np_.float32(1.0))[0], 0.1),
        "exported": (lib.grad(rehydrated), 0.1),
        "exported 2nd": (lib.grad(lib.grad(rehydrated)), 0.1),
        "exported 3rd": (lib.grad(lib.grad(lib.grad(rehydrated))), 0.1),
        "exported in jit": (lib.jit(lib.grad(rehydrated)), 0.1),
        "exported + weak path": (lib.grad(lambda x: rehydrated(x) + np_.sin(x)), 0.1),
        "exported, strong input": (lib.grad(rehydrated), np_.float32(0.1)),
        "grad of grad": (lib.grad(lib.grad(lambda x: x ** 3)), 0.1),
        "grad of grad of custom_jvp": (lib.grad(lib.grad(custom_sin)), 0.1),
        "third order": (lib.grad(lib.grad(lib.grad(lambda x: np_.sin(x) * x))), 0.1),
        "grad of vmap": (lib.grad(lambda x: np_.sum(lib.vmap(lambda y: y * x)(
            np_.ones(3) * x))), 0.1),
        "grad of jvp": (lib.grad(lambda x: lib.jvp(np_.sin, (x,), (x,))[1]), 0.1),
        "grad of jacfwd": (lib.grad(lib.jacfwd(np_.sin)), 0.1),
        "hessian": (lib.hessian(lambda x: x ** 3), 0.1),
        "mixed pytree": (lambda x: lib.grad(lambda p: p[0] * p[1])(
            (x, np_.float32(2.)))[0], 0.1),
    }


def test_gradient_weak_types_match_jax():
    got, want = both(lambda lib, np_: {
        name: (lambda v: (bool(v.weak_type), v.dtype, np.asarray(v)))(fn(x))
        for name, (fn, x) in _weak_cases(lib, np_).items()})
    assert got.keys() == want.keys()
    for name in want:
        assert got[name][:2] == want[name][:2], (name, got[name], want[name])
        np.testing.assert_allclose(got[name][2], want[name][2], rtol=1e-6, err_msg=name)
    # (the export page's cells: strong results, as a deserialized Exported's VJP makes)
    assert not want["exported"][0] and want["plain"][0]
