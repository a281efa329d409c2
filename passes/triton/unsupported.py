"""The op families a Pallas kernel lowered to Triton cannot hold, each with the reason the
error gives (`--jaxpr-pallas-to-triton` names the op at its line and adds that
interpret=True runs the kernel). The other families state theirs beside their rules."""
from __future__ import annotations

from mjax.dialect.ops import callbacks as Cb
from mjax.dialect.ops import checkify as Ck
from mjax.dialect.ops import collectives as Co
from mjax.dialect.ops import convolution as Cv
from mjax.dialect.ops import export as X
from mjax.dialect.ops import linalg as L
from mjax.dialect.ops import pallas as P
from mjax.dialect.ops import random as Rn
from mjax.dialect.ops import region_reductions as RR
from mjax.dialect.ops import shard_map as Sm
from mjax.dialect.ops import sorting as So
from mjax.dialect.ops import transforms as T
from mjax.dialect.ops import windowed as W
from mjax.passes.rules.tables import TRITON

_WHY = {
    "collectives run across devices; a Pallas kernel is one device's program": (
        Co.AllGatherOp, Co.AllToAllOp, Co.AxisIndexOp, Co.PmaxOp, Co.PminOp, Co.PpermuteOp,
        Co.PsumOp, Co.PsumScatterOp, Sm.ShardMapOp),
    "host callbacks and exported modules cannot run inside a GPU kernel": (
        Cb.CallbackOp, X.CallExportedOp),
    "transformations are expanded before kernels are compiled "
    "(--jaxpr-expand-transforms)": (
        T.JvpOp, T.VjpOp, T.LinearTransposeOp, T.VmapOp, T.CheckpointTangentOp,
        T.CustomVjpTangentOp, T.CustomVjpBwdOp),
    "checkify inside a Pallas kernel is not supported: checks are functionalized by "
    "--jaxpr-checkify outside kernels": (Ck.CheckOp, Ck.CheckifyOp),
    "random numbers inside Triton kernels are not supported; pass them in": (
        Rn.RandomBitsOp, Rn.RandomCloneOp, Rn.RandomFoldInOp, Rn.RandomSeedOp,
        Rn.RandomSplitOp, Rn.RandomUnwrapOp, Rn.RandomWrapOp, Rn.Threefry2x32Op,
        Rn.RngBitGeneratorOp, Rn.RngUniformOp),
    "no Triton lowering for this op inside kernels": (
        L.CholeskyOp, L.EigOp, L.EighOp, L.FftOp, L.GeqrfOp, L.HouseholderProductOp, L.LuOp,
        L.QrOp, L.SvdOp, L.TriangularSolveOp, L.TridiagonalSolveOp, L.TridiagonalOp,
        L.HessenbergOp, L.SchurOp, L.OrmqrOp, Cv.ConvGeneralDilatedOp, So.TopKOp,
        RR.ReduceOp, RR.ReduceWindowOp, W.ReduceWindowMaxOp, W.ReduceWindowMinOp,
        W.ReduceWindowSumOp, W.SelectAndGatherAddOp, W.SelectAndScatterAddOp),
    "a pallas_call inside a Pallas kernel is not supported": (P.PallasCallOp,),
}
for _why, _ops in _WHY.items():
    for _op in _ops:
        TRITON.unsupported(_op, _why)
