"""What equinox's and flax's own test suites needed of mjax, each compared with real JAX."""
import numpy as np
import pytest

import jax
import jax._src.traceback_util
import jax.extend
import jax.interpreters.batching
import jax.interpreters.mlir
import mjax
import mjax._src.traceback_util
import mjax.extend
import mjax.interpreters.batching
import mjax.interpreters.mlir


def _lowered_stacks(lib):
    """equinox's test_noinline `announce_transform`: a primitive whose batching rule
    binds it again with a longer stack, and whose lowering (a lower_fun) records its
    stack; jit(vmap(f)) is called once. Returns the stacks lowered."""
    lowered = []
    prim = lib.extend.core.Primitive("announce_lowering")
    prim.def_impl(lambda x, *, stack: x)
    prim.def_abstract_eval(lambda x, *, stack: x)

    def batch(args, dims, *, stack):
        return prim.bind(args[0], stack=stack + ("vmap",)), dims[0]

    def lower(x, *, stack):
        lowered.append(":".join(stack + ("mlir",)))
        return x
    lib.interpreters.batching.primitive_batchers[prim] = batch
    lib.interpreters.mlir.register_lowering(
        prim, lib.interpreters.mlir.lower_fun(lower, multiple_results=False))
    f = lib.jit(lib.vmap(lambda x: prim.bind(x, stack=()) * 2))
    out = f(np.arange(3.0, dtype=np.float32))
    return np.asarray(out), lowered


def test_only_the_batched_primitive_is_lowered():
    # (the unbatched body a vmap expanded is dead: its primitives are never lowered)
    want_out, want = _lowered_stacks(jax)
    got_out, got = _lowered_stacks(mjax)
    np.testing.assert_array_equal(got_out, want_out)
    assert want == ["vmap:mlir"]
    assert got == want


def _failing_with_registered_file(lib, mode):
    """flax's traceback_util_test: a library registers its own file for exclusion and
    wraps its entry point in jax._src.traceback_util.api_boundary; an error raised
    under a jit inside it reaches the user without the library's frames."""
    src = lib._src.traceback_util
    here = __file__
    code = compile("def library_entry(f, x):\n    return f(x)\n", "/tmp/_mjax_lib_mod.py",
                   "exec")
    scope = {}
    exec(code, scope)
    entry = src.api_boundary(scope["library_entry"])
    src.register_exclusion("/tmp/_mjax_lib_mod.py")

    def user(x):
        raise ValueError("error here.")
    previous = lib.config.jax_traceback_filtering
    lib.config.update("jax_traceback_filtering", mode)
    try:
        try:
            entry(lib.jit(user), np.ones(3, np.float32))
        except ValueError as e:
            err = e
    finally:
        lib.config.update("jax_traceback_filtering", previous)
        src._exclude_paths.remove("/tmp/_mjax_lib_mod.py")
    files = []
    tb = err.__traceback__
    while tb is not None:
        if mode != "tracebackhide" or "__tracebackhide__" not in tb.tb_frame.f_locals:
            files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return err, [f == here for f in files]


@pytest.mark.parametrize("mode", ["remove_frames", "tracebackhide"])
def test_registered_library_frames_are_filtered(mode):
    want_err, want = _failing_with_registered_file(jax, mode)
    got_err, got = _failing_with_registered_file(mjax, mode)
    assert got == want          # (the test's own frames only)
    assert all(want)
    if mode == "remove_frames":
        assert isinstance(want_err.__cause__, jax._src.traceback_util.UnfilteredStackTrace)
        assert isinstance(got_err.__cause__, mjax._src.traceback_util.UnfilteredStackTrace)


def test_mean_over_a_list_of_axes_matches_the_tuple():
    # flax's InstanceNorm test: x.mean(axis=[1, 2]) eagerly divides as JAX's jitted mean
    # does (XLA multiplies by the reciprocal of a constant count), as axis=(1, 2) does
    x = np.random.RandomState(0).normal(size=(2, 3, 4, 5)).astype(np.float32) + 1e4
    for keepdims in (False, True):
        want = np.asarray(jax.numpy.asarray(x).mean(axis=[1, 2], keepdims=keepdims))
        got = np.asarray(mjax.numpy.asarray(x).mean(axis=[1, 2], keepdims=keepdims))
        np.testing.assert_array_equal(got, want)
        tup = np.asarray(mjax.numpy.mean(mjax.numpy.asarray(x), axis=(1, 2),
                                         keepdims=keepdims))
        np.testing.assert_array_equal(got, tup)


def test_list_static_argument_changed_after_the_call():
    # (the list bound into the cached program is a copy: the caller may change theirs)
    x = mjax.numpy.asarray(np.arange(24.0, dtype=np.float32).reshape(2, 3, 4))
    axes = [1, 2]
    first = np.asarray(mjax.numpy.sum(x, axis=axes))
    axes.append(0)
    np.testing.assert_array_equal(np.asarray(mjax.numpy.sum(x, axis=[1, 2])), first)
    np.testing.assert_array_equal(np.asarray(mjax.numpy.sum(x, axis=axes)),
                                  np.asarray(jax.numpy.sum(np.asarray(x), axis=[0, 1, 2])))


def _buffer_copies(lib, n=4096):
    """equinox's checkpointed while loop, reduced: a cond inside a while passes two loop
    buffers through in its common branch and updates them in place in the other. The
    number of copies of the buffers XLA's compiled program makes (every iteration)."""
    jnp = lib.numpy

    def f(steps):
        def body(c):
            i, buf, flags = c

            def rare(buf, flags):
                j = jnp.argmax(flags)
                return buf.at[j].set(i), flags.at[j].set(False)
            buf, flags = lib.lax.cond(i >= 1000000, rare, lambda b, f: (b, f), buf, flags)
            return i + 1, buf, flags
        return lib.lax.while_loop(lambda c: c[0] < steps, body,
                                  (0, jnp.zeros(n, jnp.int32), jnp.ones(n, bool)))
    text = lib.jit(f).lower(10).compile().as_text()
    return sum(1 for line in text.splitlines() if " copy(" in line and f"[{n}]" in line)


def test_cond_in_a_loop_updates_buffers_in_place():
    # (a two-branch cond lowers to stablehlo.case as JAX's: with stablehlo.if's true
    # region first, XLA copied both buffers at every iteration)
    assert _buffer_copies(mjax) == _buffer_copies(jax) == 0


def _flops(lib):
    """flax's summary test_module_reuse, reduced: one block's parameters used three
    times; the flops of the whole and of the block, from Lowered.cost_analysis."""
    jnp = lib.numpy
    rng = np.random.RandomState(0)
    w = rng.normal(size=(3, 3, 8, 8)).astype(np.float32)
    var, scale = np.abs(rng.normal(size=8)).astype(np.float32), np.ones(8, np.float32)
    x = np.ones((2, 12, 12, 8), np.float32)

    def block(w, var, scale, x):
        y = lib.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return lib.nn.relu(y * (lib.lax.rsqrt(var + 1e-5) * scale))

    def three(w, var, scale, x):
        return block(w, var, scale, block(w, var, scale, block(w, var, scale, x)))
    costs = [lib.jit(f).lower(w, var, scale, x).cost_analysis() for f in (three, block)]
    # (None on a TPU: PJRT's C API has no cost analysis before compiling, in JAX too)
    return None if costs[0] is None else tuple(c["flops"] for c in costs)


def test_lowered_cost_counts_repeated_computations():
    # (Lowered.cost_analysis analyses the program as traced: the rsqrt(var) * scale the
    # three calls repeat counts three times, as in JAX's lowering without CSE)
    want = _flops(jax)
    got = _flops(mjax)
    assert got == want
    if want is None:        # (a TPU: compared with jax's None above)
        assert jax.default_backend() != "cpu"
        return
    assert got[0] == 3 * got[1]


def _closing_over_scalars(lib):
    """jaxopt's Hager-Zhang line search, reduced: eager control flow whose bodies close
    over scalar Arrays. JAX's cond/while/fori take those as operands (constvars), so XLA
    compiles `(-0.001 + m * d) - 2` with m and d unknown (and reassociates it) instead
    of folding constants: the sign of this gradient decided the line search's step."""
    jnp = lib.numpy
    d, m = jnp.float32(4.001999855041504), jnp.float32(0.5)
    g = lambda: 2 * ((-0.001 + m * d) - 2.)
    one = jnp.float32(1.)
    return [np.asarray(v).item() for v in (
        lib.lax.cond(jnp.bool_(True), g, lambda: one),
        lib.lax.while_loop(lambda c: c[0] < 1, lambda c: (c[0] + 1, g()), (0, one))[1],
        lib.lax.fori_loop(0, 1, lambda i, c: g(), one))]


def test_eager_control_flow_takes_closed_over_arrays_as_operands():
    assert _closing_over_scalars(mjax) == _closing_over_scalars(jax)
