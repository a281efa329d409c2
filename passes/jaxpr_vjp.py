"""`--jaxpr-vjp`: reverse mode = linearize (JVP) + partial evaluation + transpose.

Each `jaxpr.vjp @f` becomes a call of a forward function (primal ops; returns outputs and
residuals) and a call of a backward function (the linear ops transposed in reverse).

    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    }
    %ct_x = "jaxpr.vjp"(%x, %ct) {callee = @f} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  ==>
    func.func private @f_fwd(%x) -> (tensor<3xf32>, tensor<3xf32>) {
      %0 = "jaxpr.sin"(%x)
      %1 = "jaxpr.cos"(%x)
      return %0, %1                      // output, residual
    }
    func.func private @f_bwd(%r: tensor<3xf32>, %ct: tensor<3xf32>) -> tensor<3xf32> {
      %0 = "jaxpr.mul"(%ct, %r)
      return %0
    }
    %y, %r = "jaxpr.call"(%x) {callee = @f_fwd}
    %ct_x = "jaxpr.call"(%r, %ct) {callee = @f_bwd}

JAX: ad.vjp (linearize + backward_pass). See passes/reverse_mode.py.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.ops.transforms import VjpOp
from mjax.passes.autodiff import expand_transforms
from mjax.passes.registry import Pass, register_pass


@register_pass("jaxpr-vjp")
class JaxprVjpPass(Pass):
    """Materialize jaxpr.vjp ops as forward + backward functions (reverse-mode autodiff)."""

    def run(self, module: ir.Module) -> None:
        expand_transforms(module, only=(VjpOp,), lower_leftovers=False)
