"""The array API standard's names in mjax.numpy, checked against jax.numpy."""
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp


def test_array_api_version():
    assert mnp.__array_api_version__ == jnp.__array_api_version__ == "2024.12"


@pytest.mark.parametrize("x64", [False, True])
def test_namespace_info_matches_jax(x64):
    with mjax.enable_x64(x64):
        import jax
        with jax.enable_x64(x64):
            mine, theirs = mnp.__array_namespace_info__(), jnp.__array_namespace_info__()
            assert mine.capabilities() == theirs.capabilities()
            assert mine.default_device() is theirs.default_device() is None
            assert mine.devices()[0] is None and len(mine.devices()) == len(theirs.devices())
            assert mine.default_dtypes() == theirs.default_dtypes()
            for kind in (None, "bool", "signed integer", "unsigned integer", "integral",
                         "real floating", "complex floating", "numeric",
                         ("bool", "complex floating")):
                assert mine.dtypes(kind=kind) == theirs.dtypes(kind=kind), kind


def test_namespace_info_bad_kind():
    with pytest.raises(ValueError, match="unknown kind"):
        mnp.__array_namespace_info__().dtypes(kind="floating")
