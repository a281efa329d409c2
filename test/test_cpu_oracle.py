"""test/cpu_oracle.py's child process, run here on the CPU as on the chip: the value
comes back, the child's prints reach this process's stdout, its exceptions are raised
here, and its jax sees only the CPU."""
import os
import time

import numpy as np
import pytest

from cpu_oracle import OracleHung, _in_child, on_the_host_cpu


@on_the_host_cpu
def _scaled(x, *, by):
    print(f"scaling by {by}")
    return np.asarray(x) * by, os.environ.get("JAX_PLATFORMS")


@on_the_host_cpu
def _refuse(what):
    raise NotImplementedError(f"no {what}")


class _Unpicklable:
    def __reduce__(self):
        raise TypeError("cannot pickle this")


@on_the_host_cpu
def _refuse_with_an_unpicklable_argument():
    raise NotImplementedError({"core": _Unpicklable()})


@on_the_host_cpu(timeout=2)
def _hang():
    time.sleep(60)


def test_value_prints_and_platform_come_back(capfd):
    x = np.arange(6.0).reshape(2, 3)
    got, platforms = _in_child(_scaled, (x,), {"by": 3.0})
    np.testing.assert_array_equal(got, x * 3.0)
    assert platforms == "cpu"
    assert "scaling by 3.0" in capfd.readouterr().out


def test_exceptions_are_raised_here():
    with pytest.raises(NotImplementedError, match="no cores"):
        _in_child(_refuse, ("cores",), {})


def test_exceptions_whose_arguments_do_not_pickle_keep_their_class():
    """(JAX's interpreter's NotImplementedError holds a tracer among its arguments.)"""
    with pytest.raises(NotImplementedError, match="core"):
        _in_child(_refuse_with_an_unpicklable_argument, (), {})


def test_off_the_chip_it_calls_the_function_here():
    got, _ = _scaled(np.ones(2), by=2.0)
    np.testing.assert_array_equal(got, [2.0, 2.0])


def test_a_child_over_its_time_is_killed_and_oracle_hung_raised():
    start = time.monotonic()
    with pytest.raises(OracleHung, match="_hang ran over 2 s"):
        _in_child(_hang, (), {}, timeout=2)
    assert time.monotonic() - start < 30
