import os

# Eight CPU devices for multi-device tests; must be set before jaxlib makes a client.
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import pytest  # noqa: E402

# Tests that cannot pass on the IREE backend (MJAX_BACKEND=iree), each with the reason.
IREE_UNSUPPORTED = {
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
