import pytest

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
