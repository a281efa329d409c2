"""jax._src.test_util's device predicates and test decorators (re-exported there):
which device the tests run on, the dtypes JAX's tests use there, and skipping a test by
device or config option.

    @jtu.skip_on_devices("tpu")          # skipped where the device has the tag 'tpu'
    @jtu.run_on_devices("cpu", "cuda")
    jtu.device_under_test()              # 'cpu', 'gpu' or 'tpu' (or jax_test_dut's)

The device under test is mjax's default backend; its tags are that name and the
platform's own ('cuda' or 'rocm' beside 'gpu'), as JAX's.
"""
from __future__ import annotations

import datetime
import functools
import os
import re
import sys
import unittest

import numpy as np

from mjax.config import config, string_option
from mjax.specs import dtypes as _dt
from mjax.arrays.placement import default_backend as _default_backend, devices as _devices
from mjax.runtime import backend as _runtime, tpu as _tpu
from mjax.runtime.backend import platform_record

_TEST_DUT = string_option("jax_test_dut", "", "The device under test, when tests must "
                          "treat it specially (default: the default backend's platform).")


# ---- devices ----------------------------------------------------------------------------
def device_under_test() -> str:
    """'cpu', 'gpu' or 'tpu' (JAX's platform names), or jax_test_dut's value."""
    return _TEST_DUT.value or _default_backend()


def _platform_name() -> str:
    """The default backend's own platform ('cuda' or 'rocm' where JAX says 'gpu')."""
    return platform_record(_runtime.default_platform()).name


def _get_device_tags() -> set:
    return {device_under_test(), _platform_name()}


def test_device_matches(device_types) -> bool:
    """Whether any of `device_types` (a list of names) tags the device under test."""
    assert not isinstance(device_types, str), "device_types should be a list of strings"
    tags = _get_device_tags()
    for t in device_types:
        assert isinstance(t, str), t
        if t in tags:
            return True
    return False


test_device_matches.__test__ = False     # (not a test, pytest)


# (what JAX's GPU tests bound shared memory to: the smallest of the GPUs they run on)
_SMEM_SIZE_BOUND_FOR_TESTS = 99 * 1024

# JAX's device tags that its helpers test for (its public spellings)
_TPU, _GPU, _CUDA, _ROCM, _CPU = "tpu", "gpu", "cuda", "rocm", "cpu"


def is_device_rocm() -> bool:
    return _platform_name() == _ROCM


def is_device_cuda() -> bool:
    return _platform_name() == _CUDA


def is_cloud_tpu() -> bool:
    return _tpu.cloud_tpu_vm()


def _device_kind() -> str:
    return _devices()[0].device_kind


def get_tpu_version() -> int:
    if device_under_test() != _TPU:
        raise ValueError("Device is not TPU")
    m = re.match(r"TPU[^\d]*(\d+)", _device_kind())
    if m is None:
        raise ValueError(f"Device kind {_device_kind()} is not supported")
    return int(m.group(1))


def is_device_tpu_at_least(version: int) -> bool:
    return device_under_test() == _TPU and get_tpu_version() >= version


# device_kind spellings of the TPU variants whose name is not "v<N><variant>"
_TPU_VARIANTS = {"v5e": lambda k: "v5 lite" in k, "v6e": lambda k: "v6 lite" in k,
                 "v5p": lambda k: k.endswith("v5"), "v7x": lambda k: "TPU7x" in k}


def is_device_tpu(version: int | None = None, variant: str = "") -> bool:
    """Whether the device under test is a TPU (of that version and variant: 5, 'e')."""
    if device_under_test() != _TPU:
        return False
    if version is None:
        return True
    name, kind = f"v{version}{variant}", _device_kind()
    match = _TPU_VARIANTS.get(name)
    return match(kind) if match is not None else name in kind


def is_cloud_tpu_at_least(year: int, month: int, day: int) -> bool:
    """True off a Cloud TPU VM; on one, whether libtpu was built on that date or later
    (as its platform version's '(<timestamp>)' says; True when it says none)."""
    if not is_cloud_tpu():
        return True
    client = getattr(_runtime.get_backend(), "client", None)
    text = getattr(client, "platform_version", "").split("\n")[-1]
    stamps = re.findall(r"\((\d+)\)", text)
    if len(stamps) != 1:
        return True
    return datetime.date.fromtimestamp(int(stamps[0])) >= datetime.date(year, month, day)


def if_cloud_tpu_at_least(year: int, month: int, day: int):
    return is_cloud_tpu_at_least(year, month, day)


def pattern_search(patterns, string: str):
    for p in (patterns,) if isinstance(patterns, str) else patterns:
        if re.search(p, string):
            return p
    return None


def device_kind_match(device_patterns):
    return pattern_search(device_patterns, _device_kind())


def is_cuda_compute_capability_at_least(capability: str) -> bool:
    if not is_device_cuda():
        return False
    want = tuple(int(x) for x in capability.split("."))
    return tuple(int(x) for x in _devices()[0].compute_capability.split(".")) >= want


def is_cuda_compute_capability_equal(capability: str) -> bool:
    if not is_device_cuda():
        return False
    want = tuple(int(x) for x in capability.split("."))
    return tuple(int(x) for x in _devices()[0].compute_capability.split(".")) == want


def is_gil_disabled() -> bool:
    return not sys._is_gil_enabled() if hasattr(sys, "_is_gil_enabled") else False


def is_test_rbe() -> bool:
    return os.getenv("IS_JAX_RBE_TESTING", "").lower() in {"true", "1", "yes", "y"}


def _no_sanitizers() -> bool:
    return False    # (jaxlib's wheels are optimized builds without sanitizers)


is_asan = is_msan = is_tsan = is_sanitized = _no_sanitizers


def is_optimized_build() -> bool:
    return True


def supported_dtypes() -> set:
    """The dtypes JAX's tests exercise on the device under test (64-bit ones only with
    jax_enable_x64)."""
    dut = device_under_test()
    if dut == _TPU:
        types = {np.bool_, _dt.int4, np.int8, np.int16, np.int32, _dt.uint4, np.uint8,
                 np.uint16, np.uint32, _dt.bfloat16, np.float16, np.float32, np.complex64,
                 _dt.float8_e4m3fn, _dt.float8_e4m3b11fnuz, _dt.float8_e5m2}
    elif dut == _GPU:
        types = {np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                 np.uint32, np.uint64, _dt.bfloat16, np.float16, np.float32, np.float64,
                 np.complex64, np.complex128, _dt.float8_e4m3fn, _dt.float8_e5m2}
    else:
        types = {np.bool_, _dt.int4, np.int8, np.int16, np.int32, np.int64, _dt.uint4,
                 np.uint8, np.uint16, np.uint32, np.uint64, _dt.bfloat16, np.float16,
                 np.float32, np.float64, np.complex64, np.complex128}
    if not config.read("jax_enable_x64"):
        types -= {np.uint64, np.int64, np.float64, np.complex128}
    return types


def _device_filter(predicate, skip_reason=None):
    def decorate(test_method):
        @functools.wraps(test_method)
        def run_or_skip(self, *args, **kwargs):
            if not predicate():
                name = getattr(test_method, "__name__", "[unknown test]")
                raise unittest.SkipTest(skip_reason or f"{name} not supported on device "
                                        f"with tags {_get_device_tags()}.")
            return test_method(self, *args, **kwargs)
        return run_or_skip
    return decorate


def skip_on_devices(*disabled_devices, skip_reason=None):
    """Test-method decorator: skipped where the device under test has one of these tags."""
    if skip_reason is None:
        skip_reason = "Skipped on devices with tags: " + ", ".join(disabled_devices)
    return _device_filter(lambda: not test_device_matches(disabled_devices), skip_reason)


def run_on_devices(*enabled_devices, skip_reason=None):
    """Test-method decorator: runs only where the device under test has one of these."""
    if skip_reason is None:
        skip_reason = ("Skipped unless running on devices with tags: " +
                       ", ".join(enabled_devices))
    return _device_filter(lambda: test_device_matches(enabled_devices), skip_reason)


def device_supports_buffer_donation():
    """Test-method decorator: runs only where donated buffers are reused (XLA's
    backends; mjax's IREE backend copies)."""
    return _device_filter(lambda: _runtime.default_platform().backend == "xla")


def request_cpu_devices(nr_devices: int):
    """Asks for at least `nr_devices` CPU devices (before the backend starts; afterwards
    the count is left as it is, as in JAX)."""
    if config.read("jax_num_cpu_devices") < nr_devices:
        try:
            config.update("jax_num_cpu_devices", nr_devices)
        except RuntimeError:
            pass


def skip_on_flag(flag_name, skip_value):
    """Test-method decorator: skipped while config option `flag_name` is `skip_value`."""
    def decorate(test_method):
        @functools.wraps(test_method)
        def run_or_skip(self, *args, **kwargs):
            value = config.read(flag_name)
            if value == skip_value:
                name = getattr(test_method, "__name__", "[unknown test]")
                raise unittest.SkipTest(f"{name} not supported when FLAGS.{flag_name} "
                                        f"is {value}")
            return test_method(self, *args, **kwargs)
        return run_or_skip
    return decorate


def pytest_mark_if_available(marker: str):
    """Decorator applying pytest.mark.<marker> when pytest is installed."""
    def wrap(func_or_class):
        try:
            import pytest
        except ImportError:
            return func_or_class
        return getattr(pytest.mark, marker)(func_or_class)
    return wrap


def is_running_under_pytest() -> bool:
    return "pytest" in sys.modules


def skip_under_pytest(reason: str):
    return unittest.skipIf(is_running_under_pytest(), "Running under pytest: " + reason)


def pjrt_c_api_version_at_least(major_version: int, minor_version: int) -> bool:
    return True     # (jaxlib's own PJRT plugins are as new as JAX 0.10.2's)


def stablehlo_version_at_least(required_version: str) -> bool:
    return True


def is_cuda_version_at_least(major: int, minor: int) -> bool:
    assert 0 <= major and 0 <= minor < 100
    return is_device_cuda() and tuple(
        int(x) for x in _devices()[0].client.platform_version.split()[-1].split(".")[:2]
    ) >= (major, minor)


def get_cuda_nonportable_max_cluster_size() -> int:
    if device_kind_match("Thor$"):
        return 8
    if device_kind_match("GB10$"):
        return 12
    return 16


class CudaArchSpecificTest:
    """Mixin: skips a test unless the GPU has the architecture it needs."""

    def skip_unless_sm90a(self):
        if not is_cuda_compute_capability_equal("9.0"):
            self.skipTest("Only works on GPU with capability sm90a")

    def skip_unless_tcgen05(self):
        if not is_device_cuda():
            self.skipTest("Only works on GPU")
        elif int(_devices()[0].compute_capability.split(".")[0]) not in (10, 11):
            self.skipTest("Only works on GPU with tcgen05 instructions")

    def skip_unless_tcgen05_int8(self):
        self.skip_unless_tcgen05()
        if not any(map(is_cuda_compute_capability_equal, ("10.0", "10.1", "11.0"))):
            self.skipTest("tcgen05 in int8 only works on GPU with capability "
                          "sm100a/sm101a/sm110a")
