"""packbits and unpackbits against jax.numpy."""
import jax.numpy as jnp
import numpy as np
import pytest
import mjax.numpy as mnp
from frontend_util import check


rng = np.random.default_rng(0)


@pytest.mark.parametrize("shape,axis", [((13,), None), ((3, 10), 1), ((9, 2), 0),
                                        ((2, 3), None), ((0,), None)])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_unpackbits(shape, axis, bitorder):
    a = rng.integers(-2, 3, size=shape).astype(np.int32)
    check(mnp.packbits(a, axis=axis, bitorder=bitorder),
          jnp.packbits(a, axis=axis, bitorder=bitorder))
    check(mnp.packbits(a > 0, axis=axis, bitorder=bitorder),
          jnp.packbits(a > 0, axis=axis, bitorder=bitorder))
    u = rng.integers(0, 256, size=shape).astype(np.uint8)
    for count in (None, 3, 40):
        check(mnp.unpackbits(u, axis=axis, count=count, bitorder=bitorder),
              jnp.unpackbits(u, axis=axis, count=count, bitorder=bitorder))


def test_packbits_errors():
    with pytest.raises(TypeError, match="integer or boolean"):
        mnp.packbits(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="uint8"):
        mnp.unpackbits(np.ones(3, np.int32))
    with pytest.raises(ValueError, match="bitorder"):
        mnp.packbits(np.ones(3, np.int32), bitorder="middle")
