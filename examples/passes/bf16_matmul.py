"""A pass plugin: every f32 matmul (`jaxpr.dot_general`) runs on bf16 operands and
accumulates in f32 (`preferred_element_type=float32`), the mixed precision of TPUs and
tensor cores. docs/passes.md walks through it.

    mjax-opt model.mlir --load-pass-plugin=examples/passes/bf16_matmul.py --bf16-matmul
    jit(f, passes=[Bf16Matmul(min_size=1024)])
"""
from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from mjax.dialect.ops.structural import DotGeneralOp
from mjax.passes import Pass, Pattern, builder_before, is_dtype, register_pass, replace

BF16 = np.dtype(ml_dtypes.bfloat16)

# A dot of two f32 operands that asks for no other result type.
F32_DOT = Pattern(DotGeneralOp, operands=[is_dtype(np.float32)] * 2,
                  preferred_element_type=lambda t: t in (None, np.float32))


@register_pass("bf16-matmul")
@dataclass
class Bf16Matmul(Pass):
    """Run f32 matmuls on bf16 operands, accumulating in f32."""

    point = "before-lowering"   # after grad/vmap are expanded: their matmuls too
    min_size: int = 0           # leave dots with fewer result elements alone

    def run(self, module):
        for dot in F32_DOT.matches(module):
            if np.prod(dot.result_avals[0].shape) < self.min_size:
                continue
            b = builder_before(dot)
            lhs, rhs = (b.convert_element_type(x, new_dtype=BF16) for x in dot.operands)
            params = dict(dot.params, preferred_element_type=np.dtype(np.float32))
            replace(dot, b.emit(DotGeneralOp, lhs, rhs, **params))
