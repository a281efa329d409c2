"""A plugin pass that leaves the IR invalid (for the tests of the checks after a pass):
it gives every dot_general an attribute the op does not have."""
from jaxlib.mlir import ir

from mjax.passes import Pass, register_pass, walk


@register_pass("break-dots")
class BreakDots(Pass):
    """Give dot_general an unknown attribute (leaves invalid IR)."""

    def run(self, module):
        for op in walk(module, "dot_general"):
            op.operation.attributes["bogus"] = ir.UnitAttr.get()
