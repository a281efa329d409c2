"""A custom_vjp that also has a forward-mode rule: a jvp that is never transposed uses the
rule of a companion custom_jvp instead of raising JAX's "can't apply forward-mode" error.
Used where a function needs its own reverse rule and a cheaper forward rule (hijax's VJP
primitives, the iterative solvers of scipy.sparse.linalg)."""
from __future__ import annotations

from mjax.ad.custom import custom_vjp


class custom_vjp_with_jvp(custom_vjp):
    """custom_vjp whose forward mode runs `jvp_companion`, a custom_jvp of the same
    function, when one is set (passes/custom_rules.has_jvp_rule reads `has_jvp_rule`)."""
    jvp_companion = None

    @property
    def has_jvp_rule(self) -> bool:
        return self.jvp_companion is not None

    def _later_jvp(self, call, module, zeros=()) -> str:
        return self.jvp_companion._later_jvp(call, module, zeros)
