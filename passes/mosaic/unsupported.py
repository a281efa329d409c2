"""The op families a Pallas TPU kernel lowered to Mosaic cannot hold, each with the reason
the error gives (`--jaxpr-pallas-to-mosaic` names the op at its line and adds that
interpret=True runs the kernel). The other families state theirs beside their rules."""
from __future__ import annotations

from mjax.dialect.ops import indexing as I
from mjax.dialect.ops import pallas_remote as R
from mjax.dialect.ops import sorting as So
from mjax.dialect.ops import user as U
from mjax.passes.kernel_lowering import unsupported as K
from mjax.passes.mosaic.table import MOSAIC

K.state_unsupported(MOSAIC, {
    "collectives run across devices; in a TPU kernel, use remote DMAs and semaphores":
        K.COLLECTIVE_OPS,
    "host callbacks and exported modules cannot run inside a TPU kernel (to print, use "
    "pl.debug_print or jax.debug.print: Mosaic's tpu.log, passes/mosaic/debug.py)":
        K.HOST_OPS,
    "transformations are expanded before kernels are compiled "
    "(--jaxpr-expand-transforms)": K.TRANSFORM_OPS,
    "checkify inside a Pallas kernel is not supported: checks are functionalized by "
    "--jaxpr-checkify outside kernels": K.CHECKIFY_OPS,
    "XLA's random bit generators have no Mosaic lowering (JAX's has none either): use "
    "jax.random on a threefry2x32 key, the kernel PRNG (pltpu.prng_seed / "
    "prng_random_bits), or pass random bits in (random.py lowers the key ops)":
        K.RANDOM_OPS,
    "no Mosaic lowering for this op inside TPU kernels (JAX's has none either)":
        K.LINALG_CONV_WINDOW_OPS,
    "scatters and dynamic slices of values are not lowered for TPU kernels yet "
    "(issue 55; JAX's has no rules for them either); index refs with pl.ds instead": (
        I.DynamicSliceOp, I.DynamicUpdateSliceOp, I.ScatterOp, I.ScatterAddOp,
        I.ScatterMulOp, I.ScatterMinOp, I.ScatterMaxOp),
    "a pallas_call inside a Pallas kernel is not supported": K.PALLAS_CALL_OPS,
    "top_k and approx_top_k have no Mosaic lowering (JAX's Pallas TPU has none either)": (
        So.TopKOp, So.ApproxTopKOp),
    "user-defined primitives have no Mosaic lowering rules": (U.UserPrimitiveOp,),
    "interpret mode's remote write between a shard_map's devices: made only when a kernel "
    "is expanded into ordinary ops, never in a kernel that is compiled": (
        R.RemoteUpdateOp,),
}, replace=False)
