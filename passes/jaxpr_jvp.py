"""`--jaxpr-jvp`: materialize each `jaxpr.jvp @f` as a function built by JVP rules.

    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    }
    %y, %ty = "jaxpr.jvp"(%x, %t) {callee = @f} : (...) -> (tensor<3xf32>, tensor<3xf32>)
  ==>
    func.func private @f_jvp(%x: tensor<3xf32>, %t: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
      %0 = "jaxpr.sin"(%x)
      %1 = "jaxpr.cos"(%x)
      %2 = "jaxpr.mul"(%t, %1)
      return %0, %2
    }
    %y, %ty = "jaxpr.call"(%x, %t) {callee = @f_jvp}

Transformation ops inside @f are expanded first (inner-first). Symbolic-zero tangents
emit no ops. The transformation is passes/forward_mode.py, on the interpreter of passes/interpreter.py.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.ops.transforms import JvpOp
from mjax.passes.autodiff import expand_transforms
from mjax.passes.registry import Pass, register_pass


@register_pass("jaxpr-jvp")
class JaxprJvpPass(Pass):
    """Materialize jaxpr.jvp ops as JVP functions (forward-mode autodiff)."""

    def run(self, module: ir.Module) -> None:
        expand_transforms(module, only=(JvpOp,), lower_leftovers=False)
