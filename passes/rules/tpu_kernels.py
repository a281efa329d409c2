"""Rules for `jaxpr.tpu_custom_call` (dialect/ops/mosaic.py): a hand-written Mosaic
kernel (mjax.experimental.mosaic.as_tpu_kernel).

Only a TPU runs it: its platform's kernel pass, `--jaxpr-pallas-to-mosaic`, turns it into
`stablehlo.custom_call @tpu_custom_call` (passes/mosaic/tpu_kernel.py) before
jaxpr-to-stablehlo. On any other platform the op reaches jaxpr-to-stablehlo, whose rule
raises JAX's NotImplementedError (no lowering rule for tpu_custom_call there). A kernel
is opaque to the transformations, as JAX's tpu_custom_call_p is (JAX's batching rule
takes a vmap of size 1 only).
"""
from __future__ import annotations

from mjax.dialect.ops.mosaic import TpuCustomCallOp
from mjax.passes.registry import PassError
from mjax.passes.rules.tables import (BATCH, JVP, LOWERING_PLATFORM, MOSAIC, SHARD, TRANSPOSE,
                                      TRITON, lowering)


class TpuKernelNotImplemented(PassError, NotImplementedError):
    """A Mosaic kernel lowered for a platform other than the TPU (NotImplementedError,
    as JAX raises)."""


@lowering(TpuCustomCallOp)
def _tpu_custom_call_lower(ctx, *args, **params):
    platform = LOWERING_PLATFORM.get() or "this backend"
    raise TpuKernelNotImplemented(
        ctx.op, f"'{ctx.op.name}' op MLIR translation rule for primitive "
                f"'tpu_custom_call' not found for platform {platform} (a Mosaic kernel "
                f"runs only on a TPU, where --jaxpr-pallas-to-mosaic compiles it)")


JVP.unsupported(TpuCustomCallOp, "Differentiation rule for 'tpu_custom_call' not "
                                 "implemented (a Mosaic kernel has no derivative: wrap it "
                                 "in jax.custom_vjp with a backward kernel)")
TRANSPOSE.unsupported(TpuCustomCallOp, "a Mosaic kernel is not linear to mjax; wrap it in "
                                       "jax.custom_vjp with a backward kernel")
BATCH.unsupported(TpuCustomCallOp, "tpu_custom_call does not support non-trivial batching "
                                   "(a Mosaic kernel's shapes are fixed: loop over the "
                                   "batch, or write it into the kernel's grid)")
SHARD.unsupported(TpuCustomCallOp, "Mosaic kernels cannot be automatically partitioned. "
                                   "Please wrap the call in a shard_map.")
TRITON.unsupported(TpuCustomCallOp, "a Mosaic TPU kernel cannot be called from inside a "
                                    "Triton kernel")
MOSAIC.unsupported(TpuCustomCallOp, "a Mosaic kernel cannot be called from inside a Pallas "
                                    "kernel (call it beside the pallas_call)")

__all__ = ["TpuKernelNotImplemented"]
