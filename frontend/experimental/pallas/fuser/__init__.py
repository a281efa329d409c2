"""`mjax.experimental.pallas.fuser`: fusing the ops around a Pallas kernel into it.
JAX: jax.experimental.pallas.fuser (docs/pallas_fuser.md).

`fusible` marks a function that takes its inputs and outputs as `Fusion`s; `fuse` traces
a program around one fusible call and hands it the fusions of the ops before and after
it. `get_fusion_values` splits a fusion into a function of its values (arrays it reads,
and scalar-prefetch values); `pull_block_spec` turns the function's output BlockSpec into
BlockSpecs for those values and a kernel-side function of their blocks;
`push_block_spec` carries an input BlockSpec forward through a function.
`custom_fusion` gives a function its own fuser rules; `evaluate` runs a function
equation by equation under the fuser's restrictions.
"""
from mjax.experimental.pallas.fuser.block_spec import (BlockIndexTransform,
                                                       get_fusion_values,
                                                       get_stateful_input_fusion_values,
                                                       get_stateful_output_fusion_values,
                                                       make_scalar_prefetch_handler,
                                                       pull_block_spec, push_block_spec)
from mjax.experimental.pallas.fuser.custom import custom_fusion, evaluate
from mjax.experimental.pallas.fuser.fusible import fusible
from mjax.experimental.pallas.fuser.fusion import Fusion
from mjax.experimental.pallas.fuser.jaxpr_fusion import fuse

__all__ = ["BlockIndexTransform", "Fusion", "custom_fusion", "evaluate", "fuse", "fusible",
           "get_fusion_values", "get_stateful_input_fusion_values",
           "get_stateful_output_fusion_values", "make_scalar_prefetch_handler",
           "pull_block_spec", "push_block_spec"]
