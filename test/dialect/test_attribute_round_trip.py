"""Dense constants survive print -> parse -> decode for every dtype family, including
the printed forms MLIR uses for NaN/inf (raw bits) and complex values."""
import ml_dtypes
import numpy as np
import pytest
from jaxlib.mlir import ir

from mjax.dialect import context
from mjax.dialect.attributes import dense_elements, dense_to_numpy

CASES = [
    np.array([1e16 + 2j, np.nan + 1j * np.inf, 3.5e-20 - 1e300j], np.complex128),
    np.array([1e16 + 2j, 5 - 1j], np.complex64),
    np.full(3, 2 + 1j, np.complex64),
    np.array([np.nan, 1e30, -np.inf], np.float32),
    np.array([1.5, np.inf, 2], ml_dtypes.bfloat16),
    np.array([[1, -2], [3, 4]], np.int8),
    np.array([True, False]),
]


@pytest.mark.parametrize("arr", CASES, ids=lambda a: str(a.dtype))
def test_dense_round_trip(arr):
    with context():
        parsed = ir.Attribute.parse(str(dense_elements(arr)))
        back = dense_to_numpy(parsed)
    assert back.dtype == arr.dtype and back.shape == arr.shape
    np.testing.assert_array_equal(back, arr)


def test_uppercase_exponent_and_mixed_hex():
    with context():
        a = ir.Attribute.parse("dense<[(1.0E+16,2.0E+00), (0x7FF8000000000000,-1.0)]> : "
                               "tensor<2xcomplex<f64>>")
        back = dense_to_numpy(a)
    assert back[0] == 1e16 + 2j
    assert np.isnan(back[1].real) and back[1].imag == -1.0
