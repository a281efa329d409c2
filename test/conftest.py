import os
import re

# Eight CPU devices for multi-device tests; must be set before jaxlib makes a client.
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import pytest  # noqa: E402

ON_IREE = os.environ.get("MJAX_BACKEND", "").lower().startswith("iree")

# On the IREE backend (MJAX_BACKEND=iree), three kinds of listed skips, each with its
# reason (docs/performance.md, "The test suite on IREE", has the counts):
#
# 1. Whole files that test what one IREE device cannot do: several devices and SPMD.
IREE_UNSUPPORTED_FILES = {
    "test_sharding.py": "multi-device: meshes of 8 devices, SPMD partitioning, pmap",
    "test_sharding_more.py": "multi-device: meshes of 8 devices, SPMD partitioning",
    "test_shard_map.py": "multi-device: shard_map over meshes of 8 devices",
    "test_distributed.py": "multi-process: jax.distributed over XLA's CPU client",
}

# 2. Constructs IREE cannot compile or run: a test that reaches one fails with this
#    backend's clear error; it is reported as a skip naming the construct. (Anything
#    before that point in the test has been checked; nothing after it is.)
IREE_UNSUPPORTED_CONSTRUCTS = {
    r"call target lapack_\w+": "LAPACK custom calls (linalg decompositions and solves)",
    r"`stablehlo\.cholesky`": "stablehlo.cholesky has no IREE lowering",
    r"`stablehlo\.triangular_solve`": "stablehlo.triangular_solve has no IREE lowering",
    r"`stablehlo\.fft`": "IREE lowers FFTs of power-of-two lengths only",
    r"`stablehlo\.select_and_scatter`": "stablehlo.select_and_scatter (max-pool "
                                        "gradients) has no IREE lowering",
    r"cannot call Python host callbacks": "host callbacks: IREE programs cannot call "
                                          "back into Python",
    r"Could not map dtype (int4|uint4|float8_e4m3b11fnuz)": "IREE's runtime has no "
                                                            "buffers of this dtype",
    r"Number of devices 1 must be >= the product of mesh_shape": "multi-device: a mesh "
                                                                  "of several devices",
    r"requires \d+ logical devices, but only 1": "multi-device: several devices",
}

# 3. Single tests, each with why it cannot pass on IREE.
IREE_UNSUPPORTED = {
    "test_jit.py::test_unsupported_jit_options_raise_not_implemented":
        "IREE has one device, so jit(device=devices()[-1]) is the supported default",
}


def pytest_collection_modifyitems(config, items):
    if not ON_IREE:
        return
    for item in items:
        key = f"{item.path.name}::{item.name.split('[')[0]}"
        reason = (IREE_UNSUPPORTED_FILES.get(item.path.name) or IREE_UNSUPPORTED.get(key)
                  or IREE_UNSUPPORTED.get(f"{item.path.name}::{item.name}"))
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"IREE: {reason}"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if not ON_IREE or call.excinfo is None or call.when != "call":
        return
    message = str(call.excinfo.value)
    for pattern, reason in IREE_UNSUPPORTED_CONSTRUCTS.items():
        if re.search(pattern, message):
            report = outcome.get_result()
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0,
                               f"Skipped: IREE: {reason}")
            return
