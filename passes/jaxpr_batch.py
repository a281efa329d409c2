"""`--jaxpr-batch`: materialize each `jaxpr.vmap @f` as a batched copy of `@f`.

    func.func @f(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
      %0 = "jaxpr.mul"(%x, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    }
    %ys = "jaxpr.vmap"(%xs, %w) {callee = @f, in_axes = array<i64: 0, -1>,
        out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<8x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  ==>
    func.func private @f_batched(%xs: tensor<8x3xf32>, %w: tensor<3xf32>) -> tensor<8x3xf32> {
      %0 = "jaxpr.broadcast_in_dim"(%w) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 8, 3>}
      %1 = "jaxpr.mul"(%xs, %0)
      return %1
    }
    %ys = "jaxpr.call"(%xs, %w) {callee = @f_batched}

Transformation ops inside @f are expanded first (inner-first), so vmap of vmap works.
Rules: table `BATCH` (passes/rules/tables.py, signature in passes/rules/batch_util.py);
the interpreter is passes/batching.py.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.ops.transforms import VmapOp
from mjax.passes import batching  # noqa: F401  (registers EXPAND[VmapOp])
from mjax.passes.autodiff import expand_transforms
from mjax.passes.registry import Pass, register_pass


@register_pass("jaxpr-batch")
class JaxprBatchPass(Pass):
    """Materialize jaxpr.vmap ops as batched functions (vectorizing map)."""

    def run(self, module: ir.Module) -> None:
        expand_transforms(module, only=(VmapOp,), lower_leftovers=False)
