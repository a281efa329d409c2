"""Builder conveniences: constants keep the exact shape and dtype of their value; ops
emitted again on the same operand types are the same ops, checked as before."""
import numpy as np
import pytest
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from mjax.dialect import context
from mjax.dialect.builder import Builder
from mjax.dialect.core import InferError
from mjax.dialect.types import ShapedArray, aval_of, tensor_type


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


def _function_block(ctx, *shapes):
    """A module with one function taking f32 arguments of `shapes`; (module, block)."""
    module = ir.Module.create()
    types = [tensor_type(ShapedArray(s, np.float32)) for s in shapes]
    fn = func.FuncOp("f", ir.FunctionType.get(types, []), ip=ir.InsertionPoint(module.body))
    return module, fn.add_entry_block()


def test_emit_again_makes_the_same_op():
    """Builder.emit reuses the result types and attributes of an op it emitted before on
    the same operand types: the second op is the first one's twin, and other operand
    types or parameters still get their own inference."""
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        module, block = _function_block(ctx, (2, 3), (2, 3), (4, 3))
        x, y, z = block.arguments
        b = Builder(ir.InsertionPoint(block))
        for _ in range(2):
            b.mul(x, y)
            b.emit("reduce_sum", x, axes=(1,))
            b.emit("concatenate", x, y, dimension=0)
        b.emit("reduce_sum", x, axes=(0,))
        b.emit("concatenate", x, z, dimension=0)
        ops = [str(op).split(" = ", 1)[1] for op in block.operations]   # (no result name)
        assert ops[0:3] == ops[3:6]
        assert [aval_of(op.results[0].type).shape for op in block.operations] == [
            (2, 3), (2,), (4, 3), (2, 3), (2,), (4, 3), (3,), (6, 3)]
        assert "axes = array<i64: 1>" in ops[1] and "dimension = 0" in ops[2]


def test_emit_again_still_checks_parameters_and_operands():
    """What was refused before is refused after a valid op of the same kind was emitted
    (a bool for an int attribute: True == 1 must not find the cached op)."""
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        _, block = _function_block(ctx, (2, 3), (2, 3), (4, 5))
        x, y, z = block.arguments
        b = Builder(ir.InsertionPoint(block))
        b.emit("concatenate", x, y, dimension=1)
        with pytest.raises(InferError, match="dimension"):
            b.emit("concatenate", x, y, dimension=True)
        b.add(x, y)
        with pytest.raises(InferError):
            b.add(x, z)
