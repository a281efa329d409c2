"""Builder conveniences: constants keep the exact shape and dtype of their value."""
import numpy as np
import pytest
from jaxlib.mlir import ir

from mjax.dialect import context
from mjax.dialect.builder import Builder
from mjax.dialect.types import aval_of


@pytest.mark.parametrize("value,shape,dtype", [
    (np.float32(2.0), (), np.float32),          # 0-d stays 0-d (was (1,))
    (np.array(3, np.int32), (), np.int32),
    (np.zeros((2, 3)), (2, 3), np.float64),
    (np.arange(6).reshape(2, 3).T, (3, 2), np.int64),  # non-contiguous input
])
def test_constant_keeps_shape_and_dtype(value, shape, dtype):
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        module = ir.Module.create()
        b = Builder(ir.InsertionPoint(module.body))
        aval = aval_of(b.constant(value).type)
        assert (aval.shape, aval.dtype) == (shape, np.dtype(dtype))


def test_constant_broadcasts_to_shape():
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        module = ir.Module.create()
        c = Builder(ir.InsertionPoint(module.body)).constant(1.5, np.float32, shape=(2, 2))
        assert aval_of(c.type).shape == (2, 2)
