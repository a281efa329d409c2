"""Transfer guards (jax.transfer_guard and the jax_transfer_guard_* options) on mjax and
on JAX: which transfers each level refuses, explicit (device_put) against implicit (a
NumPy array given to a computation) ones, process-wide and per-thread settings.

On the CPU a device's memory is the host's, so only host-to-device transfers are guarded;
on a TPU reading a result back is a device-to-host transfer, guarded too (in JAX alike):
device_get is an explicit one, np.asarray of a result an implicit one."""
from __future__ import annotations

import re

import jax
import numpy as np
import pytest

import mjax

LIBS = [pytest.param(mjax, id="mjax"), pytest.param(jax, id="jax")]


def _outcomes(lib, level):
    jnp = lib.numpy
    x = jnp.ones(3)
    cases = {"eager op on a NumPy array": lambda: x + np.ones(3, np.float32),
             "jit of a NumPy array": lambda: lib.jit(lambda a: a)(np.ones(3)),
             "jnp.array of a list": lambda: jnp.array([1.0, 2.0]),
             "device_put": lambda: lib.device_put(np.ones(3)),
             "device_get": lambda: lib.device_get(x)}
    out = {}
    with lib.transfer_guard(level):
        for name, case in cases.items():
            try:
                case()
                out[name] = "ok"
            except Exception as e:       # noqa: BLE001 - the class is what is compared
                assert re.search(r"Disallowed (host-to-device|device-to-host) transfer",
                                 str(e)), e
                out[name] = type(e).__name__
    return out


@pytest.mark.parametrize("level", ["allow", "log", "disallow", "disallow_explicit"])
def test_levels_refuse_what_jax_refuses(level):
    assert _outcomes(mjax, level) == _outcomes(jax, level)


def test_disallow_refuses_implicit_transfers_only():
    got = _outcomes(mjax, "disallow")
    assert got["jit of a NumPy array"] == "JaxRuntimeError"
    assert got["device_put"] == "ok"
    assert _outcomes(mjax, "disallow_explicit")["device_put"] == "JaxRuntimeError"


@pytest.mark.parametrize("lib", LIBS)
def test_process_wide_option_and_thread_override(lib):
    f = lib.jit(lambda a: a * 2)
    try:
        lib.config.update("jax_transfer_guard", "disallow")
        assert lib.config.jax_transfer_guard_host_to_device == "disallow"
        with pytest.raises(Exception, match="Disallowed host-to-device transfer"):
            f(np.ones(3))
        with lib.transfer_guard_host_to_device("allow"):
            # (read back explicitly: "disallow" also refuses implicit device-to-host
            # transfers, which a TPU has)
            np.testing.assert_array_equal(lib.device_get(f(np.ones(4))), 2 * np.ones(4))
        with pytest.raises(Exception, match="Disallowed host-to-device transfer"):
            f(np.ones(5))
    finally:
        lib.config.update("jax_transfer_guard", None)   # (back to the default: allow)
        assert lib.config.jax_transfer_guard_host_to_device is None
    np.testing.assert_array_equal(f(np.ones(6)), 2 * np.ones(6))


def test_bad_level_is_refused():
    with pytest.raises(ValueError, match="new enum value must be None or in"):
        mjax.config.update("jax_transfer_guard", "sometimes")
