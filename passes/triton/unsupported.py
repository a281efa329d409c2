"""The op families a Pallas kernel lowered to Triton cannot hold, each with the reason the
error gives (`--jaxpr-pallas-to-triton` names the op at its line and adds that
interpret=True runs the kernel). The other families state theirs beside their rules."""
from __future__ import annotations

from mjax.dialect.ops import sorting as So
from mjax.passes.kernel_lowering import unsupported as K
from mjax.passes.rules.tables import TRITON

K.state_unsupported(TRITON, {
    "collectives run across devices; a Pallas kernel is one device's program":
        K.COLLECTIVE_OPS,
    "host callbacks and exported modules cannot run inside a GPU kernel": K.HOST_OPS,
    "transformations are expanded before kernels are compiled "
    "(--jaxpr-expand-transforms)": K.TRANSFORM_OPS,
    "checkify inside a Pallas kernel is not supported: checks are functionalized by "
    "--jaxpr-checkify outside kernels": K.CHECKIFY_OPS,
    "random numbers inside Triton kernels are not supported; pass them in": K.RANDOM_OPS,
    "no Triton lowering for this op inside kernels": K.LINALG_CONV_WINDOW_OPS + (So.TopKOp,
                                                                            So.ApproxTopKOp),
    "a pallas_call inside a Pallas kernel is not supported": K.PALLAS_CALL_OPS,
})
