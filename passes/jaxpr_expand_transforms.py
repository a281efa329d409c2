"""`--jaxpr-expand-transforms`: expand every transformation op, inner-first, any depth.

`jaxpr.jvp`, `jaxpr.vjp` and `jaxpr.vmap` are materialized (as --jaxpr-jvp, --jaxpr-vjp
and --jaxpr-batch do) starting from the innermost, so grad(grad(grad(f))), jvp-of-vjp and
grad-of-vmap work; custom_jvp_call, custom_vjp_call and checkpoint use their rules under
differentiation, and the ones left afterwards become plain calls. What each op class
does is the table `EXPAND` (passes/expansion.py); an op it does not know is an error.

    func.func @g(%x: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
      %0 = "jaxpr.vjp"(%x, %ct) {callee = @f} : (tensor<f32>, tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    }
    %0 = "jaxpr.vjp"(%x, %ct, %ct2) {callee = @g, diff_args = array<i64: 0>} : ...
  ==>
    @f_fwd, @f_bwd, @g_fwd_a0_r0, @g_bwd_a0_r0 (private) and only jaxpr.call ops

A private function `jaxpr.checkify` consumed is erased when nothing runs it any more
(its `jaxpr.check`s cannot be lowered outside checkify); other dead functions are left
to --jaxpr-dce.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.core import OPS
from mjax.dialect.ops import transforms as T
from mjax.dialect.ops.user import UserPrimitiveOp
from mjax.passes import analyses
from mjax.passes.autodiff import expand_transforms
from mjax.passes.jaxpr_checkify import remove_checkified
from mjax.passes.registry import Pass, register_pass


@register_pass("jaxpr-expand-transforms")
class JaxprExpandTransformsPass(Pass):
    """Expand all transformation ops (jvp, vjp, custom rules, checkpoint) inner-first."""

    def run(self, module: ir.Module) -> None:
        if not any(map(_expands, analyses.op_names(module))):
            analyses.preserve(module)      # (nothing to expand: the module stays as it is)
            return
        ex = expand_transforms(module)
        remove_checkified(module, ex)
        names = ex.names_after()
        if names is not None:    # (the next passes ask: known without a walk)
            analyses.establish_names(module, names)


def _expands(name: str) -> bool:
    """Whether an op of this name gives expansion work: a transformation op other than a
    plain call (whose callee has work only if it holds another one), or a user-defined
    primitive (lowered through its Python rule)."""
    cls = OPS.get(name)
    return cls is not None and (issubclass(cls, T.TransformOp) and cls is not T.CallOp
                                or cls is UserPrimitiveOp)
