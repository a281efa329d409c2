import os

# Eight CPU devices for multi-device tests; must be set before jaxlib makes a client.
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import pytest  # noqa: E402

# Tests that cannot pass on the IREE backend (MJAX_BACKEND=iree), each with the reason.
IREE_UNSUPPORTED = {
    "test_ad_api.py::test_checkpoint_second_order_through_the_barrier":
        "float64 sin/cos: IREE's llvm-cpu target has no float64 transcendental functions",
    "test_ad_api.py::test_hessian_is_jacfwd_of_jacrev_and_matches_jax":
        "float64 sin/cos: IREE's llvm-cpu target has no float64 transcendental functions",
    "test_ad_api.py::test_check_grads_passes_on_correct_functions":
        "float64 sin/cos: IREE's llvm-cpu target has no float64 transcendental functions",
    "test_ad_api.py::test_check_grads_catches_wrong_jvp":
        "float64 sin/cos: IREE's llvm-cpu target has no float64 transcendental functions",
    "test_ad_api.py::test_check_grads_catches_wrong_vjp":
        "float64 sin/cos: IREE's llvm-cpu target has no float64 transcendental functions",
    "test_ad_api.py::test_check_grads_order2_catches_wrong_second_derivative":
        "float64 sin/cos: IREE's llvm-cpu target has no float64 transcendental functions",
    "test_jit.py::test_unsupported_jit_options_raise_not_implemented":
        "IREE has one device, so jit(device=devices()[-1]) is the supported default",
}


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("MJAX_BACKEND", "").lower().startswith("iree"):
        return
    for item in items:
        key = f"{item.path.name}::{item.name.split('[')[0]}"
        if key in IREE_UNSUPPORTED:
            item.add_marker(pytest.mark.skip(reason=f"IREE: {IREE_UNSUPPORTED[key]}"))
