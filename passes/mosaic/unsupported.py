"""The op families a Pallas TPU kernel lowered to Mosaic cannot hold, each with the reason
the error gives (`--jaxpr-pallas-to-mosaic` names the op at its line and adds that
interpret=True runs the kernel). The other families state theirs beside their rules."""
from __future__ import annotations

from mjax.dialect.ops import callbacks as Cb
from mjax.dialect.ops import checkify as Ck
from mjax.dialect.ops import collectives as Co
from mjax.dialect.ops import convolution as Cv
from mjax.dialect.ops import export as X
from mjax.dialect.ops import indexing as I
from mjax.dialect.ops import linalg as L
from mjax.dialect.ops import pallas as P
from mjax.dialect.ops import random as Rn
from mjax.dialect.ops import region_reductions as RR
from mjax.dialect.ops import shard_map as Sm
from mjax.dialect.ops import sorting as So
from mjax.dialect.ops import transforms as T
from mjax.dialect.ops import user as U
from mjax.dialect.ops import windowed as W
from mjax.passes.mosaic.table import MOSAIC

_WHY = {
    "collectives run across devices; in a TPU kernel, use remote DMAs and semaphores": (
        Co.AllGatherOp, Co.AllToAllOp, Co.AxisIndexOp, Co.PmaxOp, Co.PminOp, Co.PpermuteOp,
        Co.PsumOp, Co.PsumScatterOp, Sm.ShardMapOp),
    "host callbacks and exported modules cannot run inside a TPU kernel (JAX lowers "
    "pl.debug_print to tpu.log; mjax's pl.debug_print is a host callback, not lowered "
    "yet: issue 55)": (Cb.CallbackOp, X.CallExportedOp),
    "transformations are expanded before kernels are compiled "
    "(--jaxpr-expand-transforms)": (
        T.JvpOp, T.VjpOp, T.LinearTransposeOp, T.VmapOp, T.CheckpointTangentOp,
        T.CustomVjpTangentOp, T.CustomVjpBwdOp),
    "checkify inside a Pallas kernel is not supported: checks are functionalized by "
    "--jaxpr-checkify outside kernels": (Ck.CheckOp, Ck.CheckifyOp),
    "the kernel PRNG (pltpu.prng_seed / prng_random_bits) is not lowered yet (issue 55); "
    "pass random bits in": (
        Rn.RandomBitsOp, Rn.RandomCloneOp, Rn.RandomFoldInOp, Rn.RandomSeedOp,
        Rn.RandomSplitOp, Rn.RandomUnwrapOp, Rn.RandomWrapOp, Rn.Threefry2x32Op,
        Rn.RngBitGeneratorOp, Rn.RngUniformOp),
    "no Mosaic lowering for this op inside TPU kernels (JAX's has none either)": (
        L.CholeskyOp, L.EigOp, L.EighOp, L.FftOp, L.GeqrfOp, L.HouseholderProductOp, L.LuOp,
        L.QrOp, L.SvdOp, L.TriangularSolveOp, L.TridiagonalSolveOp, L.TridiagonalOp,
        L.HessenbergOp, L.SchurOp, L.OrmqrOp, Cv.ConvGeneralDilatedOp,
        RR.ReduceOp, RR.ReduceWindowOp, W.ReduceWindowMaxOp, W.ReduceWindowMinOp,
        W.ReduceWindowSumOp, W.SelectAndGatherAddOp, W.SelectAndScatterAddOp),
    "gathers, scatters and dynamic slices of values are not lowered for TPU kernels yet "
    "(issue 55); index refs with pl.ds instead": (
        I.DynamicSliceOp, I.DynamicUpdateSliceOp, I.GatherOp, I.ScatterOp, I.ScatterAddOp,
        I.ScatterMulOp, I.ScatterMinOp, I.ScatterMaxOp),
    "a pallas_call inside a Pallas kernel is not supported": (P.PallasCallOp,),
    "top_k has no Mosaic lowering (JAX's Pallas TPU has none either)": (So.TopKOp,),
    "user-defined primitives have no Mosaic lowering rules": (U.UserPrimitiveOp,),
}
for _why, _ops in _WHY.items():
    for _op in _ops:
        MOSAIC.unsupported(_op, _why, replace=False)
