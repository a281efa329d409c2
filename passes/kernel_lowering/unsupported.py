"""The op families no Pallas kernel can hold, whichever backend lowers it. Each backend's
unsupported.py gives each family its reason, the error a user sees, through
`state_unsupported`."""
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
from mjax.dialect.ops import transforms as T
from mjax.dialect.ops import windowed as W
from mjax.passes.rules.tables import RuleTable

COLLECTIVE_OPS = (Co.AllGatherOp, Co.AllToAllOp, Co.AxisIndexOp, Co.PmaxOp, Co.PminOp,
                  Co.PpermuteOp, Co.PsumOp, Co.PsumScatterOp, Sm.ShardMapOp)
HOST_OPS = (Cb.CallbackOp, X.CallExportedOp)          # host callbacks, exported modules
TRANSFORM_OPS = (T.JvpOp, T.VjpOp, T.LinearTransposeOp, T.VmapOp, T.CheckpointTangentOp,
                 T.CustomVjpTangentOp, T.CustomVjpBwdOp)
CHECKIFY_OPS = (Ck.CheckOp, Ck.CheckifyOp)
RANDOM_OPS = (Rn.RandomBitsOp, Rn.RandomCloneOp, Rn.RandomFoldInOp, Rn.RandomSeedOp,
              Rn.RandomSplitOp, Rn.RandomUnwrapOp, Rn.RandomWrapOp, Rn.Threefry2x32Op,
              Rn.RngBitGeneratorOp, Rn.RngUniformOp)
# linear algebra, convolution, general and windowed reductions
LINALG_CONV_WINDOW_OPS = (
    L.CholeskyOp, L.EigOp, L.EighOp, L.FftOp, L.GeqrfOp, L.HouseholderProductOp, L.LuOp,
    L.QrOp, L.SvdOp, L.TriangularSolveOp, L.TridiagonalSolveOp, L.TridiagonalOp,
    L.HessenbergOp, L.SchurOp, L.OrmqrOp, Cv.ConvGeneralDilatedOp,
    RR.ReduceOp, RR.ReduceWindowOp, W.ReduceWindowMaxOp, W.ReduceWindowMinOp,
    W.ReduceWindowSumOp, W.SelectAndGatherAddOp, W.SelectAndScatterAddOp)
PALLAS_CALL_OPS = (P.PallasCallOp,)


def state_unsupported(table: RuleTable, reasons: dict, *, replace: bool = True) -> None:
    """`table.unsupported(op, why, replace=replace)` for each op of each `why: ops`."""
    for why, ops in reasons.items():
        for op in ops:
            table.unsupported(op, why, replace=replace)


__all__ = ["CHECKIFY_OPS", "COLLECTIVE_OPS", "HOST_OPS", "LINALG_CONV_WINDOW_OPS",
           "PALLAS_CALL_OPS", "RANDOM_OPS", "TRANSFORM_OPS", "state_unsupported"]
