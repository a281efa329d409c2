import os
import sys

# test/frontend/<folder>/ mirrors the frontend's floors (docs/testing.md); a
# test may import another folder's test module by its name (basenames are unique),
# so each folder is on sys.path, after this one.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.extend(p for p in (os.path.join(_HERE, d) for d in sorted(os.listdir(_HERE)))
                if os.path.isdir(p) and p not in sys.path
                and any(f.startswith("test_") for f in os.listdir(p)))

import pytest  # noqa: E402

from frontend_util import x64


def pytest_configure(config):
    # The jax oracle warns whenever x64 is off and a 64-bit dtype is requested.
    config.addinivalue_line("filterwarnings", "ignore:Explicitly requested dtype")


@pytest.fixture(autouse=True)
def _x64_off_in_both():
    """Other test folders switch the jax oracle to x64 globally; start from x64 off."""
    with x64(False):
        yield


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64_mode(request):
    with x64(request.param):
        yield request.param


@pytest.fixture
def lowerings(monkeypatch):
    """The number of times a program is lowered: a jit's (jitted.lower_to_stablehlo), and
    an eager vjp/linearize's forward and linear parts (each in one compile_for_buffers)."""
    from mjax.ad import linear_split
    from mjax.jit import jitted as jitted_module
    count = [0]

    def counting(module, name):
        original = getattr(module, name)

        def counted(*args, **kwargs):
            count[0] += 1
            return original(*args, **kwargs)
        monkeypatch.setattr(module, name, counted)
    counting(jitted_module, "lower_to_stablehlo")
    counting(linear_split, "compile_for_buffers")
    return count
