import pytest


@pytest.fixture(autouse=True)
def _x64_off_in_both():
    """Tests elsewhere switch x64 on in mjax and in the jax oracle; these tests compare
    dtypes with x64 off, so start from off in both (and restore what was there)."""
    import jax

    import mjax
    old_m, old_j = mjax.config.read("jax_enable_x64"), jax.config.jax_enable_x64
    mjax.config.update("jax_enable_x64", False)
    jax.config.update("jax_enable_x64", False)
    try:
        yield
    finally:
        mjax.config.update("jax_enable_x64", old_m)
        jax.config.update("jax_enable_x64", old_j)
