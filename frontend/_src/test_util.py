"""JAX-private: jax._src.test_util (`jtu`), the helpers JAX's own tests and many
libraries' tests are written with, so those tests run on mjax unchanged (imported
there, under the alias, as `jtu` from `jax._src`):

    class MyTest(jtu.JaxTestCase):
        @jtu.sample_product(shape=[(3,), (2, 3)], dtype=jtu.dtypes.floating)
        @jtu.skip_on_devices("tpu")
        def test_sin(self, shape, dtype):
            args_maker = lambda: [jtu.rand_default(self.rng())(shape, dtype)]
            self._CheckAgainstNumpy(np.sin, jnp.sin, args_maker)
            self._CompileAndCheck(jnp.sin, args_maker)

Device predicates read mjax's default backend ('cpu', 'gpu' with the tag 'cuda' or
'rocm', 'tpu'; jax_test_dut overrides). JaxTestCase, the config contexts and the
counters are in test_util_case; the random samplers in test_util_rand; tolerances and
check_grads in public_test_util. What mjax cannot do for a helper raises
NotImplementedError naming it.
"""
from __future__ import annotations

import contextlib
import functools
import math
import os
import re
import sys
import tempfile
import unittest
from functools import cached_property

import jaxlib.version as _jaxlib_version
import numpy as np

from mjax.config import bool_option, config
from mjax.specs import dtypes as _dt
from mjax.base import monitoring
from mjax.base.tree_util import tree_all, tree_flatten, tree_map, tree_unflatten
from mjax.arrays.placement import devices as _devices
from mjax.sharding import AxisType, Mesh, make_mesh, set_mesh
from mjax.numpy import result_type as _result_type
from mjax import jit as _jit, make_jaxpr as _make_jaxpr, vjp as _vjp
from mjax.jaxpr.objects import subjaxprs as _subjaxprs
from mjax._src.public_test_util import (  # noqa: F401
    _assert_numpy_allclose, _check_dtypes_match, _default_tolerance, _dtype, check_close,
    check_grads, check_jvp, check_vjp, default_gradient_tolerance, default_tolerance,
    rand_like, tolerance, ToleranceDict)
from mjax._src.test_loader import (JaxTestLoader, TEST_NUM_THREADS,  # noqa: F401
                                   thread_unsafe_test, thread_unsafe_test_class)
from mjax._src.test_warning_util import ignore_warning  # noqa: F401
from mjax._src.test_util_case import (  # noqa: F401
    BufferDonationTestCase, JaxTestCase, NotPresent, TEST_WITH_PERSISTENT_COMPILATION_CACHE,
    assert_global_configs_unchanged, assert_num_jit_and_pmap_compilations,
    collect_lowered_jaxprs, count_aot_jit_cpp_cache_miss,
    count_compilation_after_persistent_cache_miss, count_device_put,
    count_device_put_fast_path_hit, count_internal_device_puts,
    count_jax_array_shard_arg_calls, count_jit_and_pmap_lowerings,
    count_jit_compilation_cache_miss, count_jit_tracing_cache_miss,
    count_pjit_cpp_cache_miss, count_primitive_compiles, count_subjaxpr_to_hlo_conversion,
    global_config_context, is_sequence, thread_local_config_context, with_config,
    with_global_config)
from mjax._src.test_util_devices import (  # noqa: F401
    CudaArchSpecificTest, _SMEM_SIZE_BOUND_FOR_TESTS, _get_device_tags, device_kind_match, device_supports_buffer_donation,
    device_under_test, get_cuda_nonportable_max_cluster_size, get_tpu_version,
    if_cloud_tpu_at_least, is_asan, is_cloud_tpu, is_cloud_tpu_at_least,
    is_cuda_compute_capability_at_least, is_cuda_compute_capability_equal,
    is_cuda_version_at_least, is_device_cuda, is_device_rocm, is_device_tpu,
    is_device_tpu_at_least, is_gil_disabled, is_msan, is_optimized_build,
    is_running_under_pytest, is_sanitized, is_test_rbe, is_tsan, pattern_search,
    pjrt_c_api_version_at_least, pytest_mark_if_available, request_cpu_devices,
    run_on_devices, skip_on_devices, skip_on_flag, skip_under_pytest,
    stablehlo_version_at_least, supported_dtypes, test_device_matches)
from mjax._src.test_util_params import (  # noqa: F401
    NUM_GENERATED_CASES, cases_from_gens, named_cases_from_sampler, parameterized_filterable,
    sample_product, sample_product_testcases, sanitize_test_name)
from mjax._src.test_util_rand import (  # noqa: F401
    NUMPY_SCALAR_SHAPE, PYTHON_SCALAR_SHAPE, ScalarShape, dtype_str,
    format_shape_dtype_string, is_valid_shape, rand_bool, rand_default, rand_fullrange,
    rand_indices_unique_along_axis, rand_int, rand_nonzero, rand_not_small, rand_positive,
    rand_small, rand_small_positive, rand_some_equal, rand_some_inf, rand_some_inf_and_nan,
    rand_some_nan, rand_some_zero, rand_uniform, rand_unique_int)

SKIP_SLOW_TESTS = bool_option(
    "jax_skip_slow_tests",
    os.getenv("JAX_SKIP_SLOW_TESTS", "").lower() in ("1", "true", "yes", "on", "y", "t"),
    "Skip tests marked as slow (> 5 sec).")


# ---- dtypes -----------------------------------------------------------------------------
def num_float_bits(dtype) -> int:
    return _dt.finfo(_dt.canonicalize_dtype(dtype)).bits


def _default_of_kind(kind: str):
    x64 = config.read("jax_enable_x64")
    return {"b": np.dtype(bool), "i": _dt.default_int(), "f": _dt.default_float(),
            "c": _dt.default_complex(),
            "u": np.dtype(np.uint64 if x64 else np.uint32)}.get(kind)


def to_default_dtype(arr) -> np.ndarray:
    """arr as a NumPy array of the default dtype of its kind (jax_enable_x64's)."""
    arr = np.asarray(arr)
    dtype = _default_of_kind(arr.dtype.kind)
    return arr.astype(dtype) if dtype is not None else arr


def with_jax_dtype_defaults(func, use_defaults=True):
    """func whose outputs (all, or those `use_defaults`, a pytree of bools, marks) are
    converted to the default dtypes (for NumPy reference functions)."""
    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        result = func(*args, **kwargs)
        if isinstance(use_defaults, bool):
            return tree_map(to_default_dtype, result) if use_defaults else result
        return tree_map(lambda a, use: to_default_dtype(a) if use else a, result,
                        use_defaults)
    return wrapped


def _normalize_tolerance(tol) -> dict:
    tol = tol or 0
    if isinstance(tol, dict):
        return {np.dtype(k): v for k, v in tol.items()}
    return dict.fromkeys(_default_tolerance, tol)


def join_tolerance(tol1, tol2) -> dict:
    """The larger of the two tolerances, per dtype."""
    out = _normalize_tolerance(tol1)
    for k, v in _normalize_tolerance(tol2).items():
        out[k] = max(v, out.get(k, 0))
    return out


def check_eq(xs, ys, err_msg: str = "") -> None:
    tree_all(tree_map(lambda x, y: _assert_numpy_allclose(x, y, err_msg=err_msg), xs, ys))



# ---- meshes -----------------------------------------------------------------------------
@contextlib.contextmanager
def with_mesh(named_shape):
    """A Mesh of the first local devices, [(name, size), ...], for the block (skips the
    test when there are too few devices)."""
    names = tuple(n for n, _ in named_shape)
    shape = tuple(s for _, s in named_shape)
    size = math.prod(shape)
    local = list(_devices())
    if len(local) < size:
        raise unittest.SkipTest(f"Test requires {size} local devices")
    with Mesh(np.array(local[:size]).reshape(shape), names):
        yield


def with_mesh_from_kwargs(f):
    return lambda *args, **kwargs: with_mesh(kwargs["mesh"])(f)(*args, **kwargs)


def create_mesh(mesh_shape, axis_names, iota_order=False, axis_types=None):
    """jax.make_mesh(mesh_shape, axis_names) (iota_order: the devices in id order), or
    a unittest.SkipTest when there are fewer devices than the mesh needs."""
    size = math.prod(mesh_shape)
    all_devices = _devices()
    if len(all_devices) < size:
        raise unittest.SkipTest(f"Test requires {size} global devices and found "
                                f"{len(all_devices)}.")
    if iota_order:
        ordered = sorted(all_devices, key=lambda d: d.id)
        return Mesh(np.array(ordered[:size]).reshape(mesh_shape), axis_names,
                    axis_types=axis_types)
    if axis_types is None:
        axis_types = (AxisType.Auto,) * len(mesh_shape)
    return make_mesh(mesh_shape, axis_names, axis_types)


def with_explicit_mesh(sizes, names, axis_types=None, iota_order=False):
    """Decorator: the function runs under set_mesh of a new mesh, given as `mesh=`."""
    axis_types = (AxisType.Explicit,) * len(names) if axis_types is None else axis_types

    def decorate(fn):
        def with_the_mesh(*args, **kwargs):
            mesh = create_mesh(sizes, names, iota_order, axis_types=axis_types)
            with set_mesh(mesh):
                return fn(*args, **kwargs, mesh=mesh)
        return with_the_mesh
    return decorate


# ---- dtype groups -----------------------------------------------------------------------
class _LazyDtypes:
    """The dtype lists tests are parameterized over, each cut to supported_dtypes() when
    first read (the device under test is not known at import)."""

    def supported(self, dtypes) -> list:
        ok = supported_dtypes()
        return [d for d in dtypes if d in ok]

    @cached_property
    def custom_floats(self):
        return self.supported([_dt.bfloat16, _dt.float8_e4m3b11fnuz, _dt.float8_e4m3fn,
                               _dt.float8_e4m3fnuz, _dt.float8_e5m2, _dt.float8_e5m2fnuz,
                               _dt.float8_e3m4, _dt.float8_e4m3, _dt.float8_e8m0fnu,
                               _dt.float4_e2m1fn])

    floating = cached_property(lambda self: self.supported([np.float32, np.float64]))
    all_floating = cached_property(lambda self: self.supported(
        [_dt.bfloat16, np.float16, np.float32, np.float64]))
    integer = cached_property(lambda self: self.supported([np.int32, np.int64]))
    all_integer = cached_property(lambda self: self.supported(
        [np.int8, np.int16, np.int32, np.int64]))
    unsigned = cached_property(lambda self: self.supported([np.uint32, np.uint64]))
    all_unsigned = cached_property(lambda self: self.supported(
        [np.uint8, np.uint16, np.uint32, np.uint64]))
    complex = cached_property(lambda self: self.supported([np.complex64, np.complex128]))
    boolean = cached_property(lambda self: self.supported([np.bool_]))
    inexact = cached_property(lambda self: self.floating + self.complex)
    all_inexact = cached_property(lambda self: self.all_floating + self.complex)
    numeric = cached_property(lambda self: self.floating + self.integer + self.unsigned +
                              self.complex)
    all = cached_property(lambda self: self.all_floating + self.all_integer +
                          self.all_unsigned + self.complex + self.boolean)


dtypes = _LazyDtypes()


def strict_promotion_if_dtypes_match(dtypes):
    """Strict dtype promotion when all dtypes are equal, standard otherwise."""
    strict = all(d == dtypes[0] for d in dtypes)
    return config.override(jax_numpy_dtype_promotion="strict" if strict else "standard")


def promote_like_jnp(fun, inexact=False):
    """fun with its arguments first converted to jnp.result_type of them all (inexact:
    made inexact), so a NumPy reference promotes as jax.numpy does."""
    def wrapper(*args, **kw):
        flat, tree = tree_flatten(args)
        if flat:
            dtype = _result_type(*flat)
            if inexact:
                dtype = _dt.to_inexact_dtype(dtype)
            flat = [np.asarray(x).astype(dtype) for x in flat]
        return fun(*tree_unflatten(tree, flat), **kw)
    return wrapper


_VERSION = re.compile(r"([0-9]+(?:\.[0-9]+)*)(?:(rc|dev).*)?")


def parse_version(v: str) -> tuple:
    m = _VERSION.match(v)
    if m is None:
        raise ValueError(f"Unable to parse version '{v}'")
    return tuple(int(x) for x in m.group(1).split("."))


def numpy_version() -> tuple:
    return parse_version(np.__version__)


def jaxlib_version() -> tuple:
    return parse_version(_jaxlib_version.__version__)


# ---- capturing, environment, events ---------------------------------------------------
@contextlib.contextmanager
def _capture_output(fp):
    """Captures what is written to file object `fp`'s descriptor (Python's and native
    code's writes); yields a function giving the text once the block has ended."""
    captured = None

    def get_output() -> str:
        if captured is None:
            raise ValueError("get_output() called while the context is active.")
        return captured
    with tempfile.NamedTemporaryFile(mode="w+", encoding="utf-8") as f:
        saved = os.dup(fp.fileno())
        os.dup2(f.fileno(), fp.fileno())
        try:
            yield get_output
        finally:
            fp.flush()
            os.fsync(fp.fileno())
            f.seek(0)
            captured = f.read()
            os.dup2(saved, fp.fileno())
            os.close(saved)


capture_stdout = functools.partial(_capture_output, sys.stdout)
capture_stderr = functools.partial(_capture_output, sys.stderr)


@contextlib.contextmanager
def set_env(**kwargs):
    """Sets (None: unsets) environment variables for the block, then restores them."""
    original = {k: os.environ.pop(k, None) for k in kwargs}
    os.environ.update({k: v for k, v in kwargs.items() if v is not None})
    try:
        yield
    finally:
        for k in kwargs:
            os.environ.pop(k, None)
        os.environ.update({k: v for k, v in original.items() if v is not None})


@contextlib.contextmanager
def register_event_duration_listener(callback):
    """jax.monitoring's duration listener `callback`, for the block. (mjax records no
    compile durations of its own: only what code records reaches it.)"""
    monitoring.register_event_duration_secs_listener(callback)
    try:
        yield
    finally:
        monitoring.unregister_event_duration_listener(callback)


# ---- jaxprs -----------------------------------------------------------------------------
def iter_eqns(jaxpr):
    """The equations of `jaxpr` and of the jaxprs in their parameters, depth first."""
    yield from jaxpr.eqns
    for sub in _subjaxprs(jaxpr):
        yield from iter_eqns(sub)


def _dot_params(fun, args, name):
    jaxpr = _make_jaxpr(fun)(*args)
    return [e.params[name] for e in iter_eqns(jaxpr.jaxpr)
            if str(e.primitive) == "dot_general"]


def assert_dot_precision(expected_precision, fun, *args):
    for precision in _dot_params(fun, args, "precision"):
        msg = f"Unexpected precision: {expected_precision} != {precision}"
        if isinstance(precision, tuple):
            assert precision[0] == expected_precision, msg
            assert precision[1] == expected_precision, msg
        else:
            assert precision == expected_precision, msg


def assert_dot_preferred_element_type(expected, fun, *args, **kwargs):
    for t in _dot_params(functools.partial(fun, **kwargs), args, "preferred_element_type"):
        assert expected == t, f"Unexpected preferred_element_type: {expected} != {t}"


def fwd_bwd_jaxprs(f, *example_args):
    """The jaxprs of vjp(f)'s forward pass and of its pullback."""
    fwd, (y_shape, res_shape) = _make_jaxpr(lambda *a: _vjp(f, *a), return_shape=True)(
        *example_args)
    return fwd, _make_jaxpr(lambda res, outs: res(outs))(res_shape, y_shape)


def check_raises(thunk, err_type, msg):
    try:
        thunk()
        assert False
    except err_type as e:
        assert str(e).startswith(msg), f"\n{e}\n\n{msg}\n"


def check_raises_regexp(thunk, err_type, pattern):
    try:
        thunk()
        assert False
    except err_type as e:
        assert re.match(pattern, str(e)), f"{e}\n\n{pattern}\n"


# jit, and a no-op in its place (tests parameterized over both)
_PJIT_IMPLEMENTATION = _jit
_NOOP_JIT_IMPLEMENTATION = lambda x, *args, **kwargs: x     # noqa: E731
_NOOP_JIT_IMPLEMENTATION._name = "noop"
JIT_IMPLEMENTATION = (_PJIT_IMPLEMENTATION, _NOOP_JIT_IMPLEMENTATION)
MeshSpec = list


def complex_plane_sample(dtype, size_re=10, size_im=None):
    """A (3 + 2*size_im, 3 + 2*size_re) grid of complex `dtype` values over the plane:
    each axis is -inf, the most negative finite value, size-2 log-spaced values,
    -tiny, 0, tiny, the mirrored positives and +inf (as JAX's)."""
    if size_im is None:
        size_im = size_re
    finfo = np.finfo(dtype)
    tiny = finfo.tiny

    def axis(size):
        dps = 3.3219280948873626       # (bits per decimal digit)
        points = np.zeros(3 + 2 * size, dtype=finfo.dtype)
        with ignore_warning(category=RuntimeWarning):   # (overflow in the cast)
            neg = -np.logspace(finfo.maxexp / dps, finfo.minexp / dps, size,
                               dtype=finfo.dtype)
            points[-size - 1:-1] = -neg[::-1]
            points[1:size + 1] = neg
        if size > 1:
            points[1], points[-2] = finfo.min, finfo.max
        if size > 0:
            points[size], points[-size - 1] = -tiny, tiny
        points[0], points[-1] = -np.inf, np.inf
        return points
    n_re, n_im = 3 + 2 * size_re, 3 + 2 * size_im
    real = axis(size_re).reshape((-1, n_re)).repeat(n_im, 0).astype(dtype)
    imag = axis(size_im).repeat(2).view(dtype)
    imag.real[:] = 0
    return real + imag.reshape((n_im, -1)).repeat(n_re, 1)


def runtime_environment() -> str | None:
    """None, 'bazel' or 'pytest'."""
    if sys.executable is None:
        return None
    return "bazel" if "bazel-out" in sys.executable else "pytest"


# JAX's helpers that mjax does not provide: what each needs.
_MISSING = {
    "vectorize_with_mpmath": "JAX's mpmath reference functions (mpmath-based accuracy "
                             "tests)",
    "numpy_with_mpmath": "JAX's mpmath reference functions (mpmath-based accuracy tests)",
}


def __getattr__(name):
    if name in _MISSING:
        raise NotImplementedError(f"jtu.{name}: mjax lacks {_MISSING[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
