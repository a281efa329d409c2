"""Per-family rule modules. Importing this package fills the tables in `tables.py`.

Rule modules import only `tables.py`, the registrars (`ad_util`, `batch_util`,
`sharding`) and each other: what a rule needs of a transformation (a region's block
transformed, a callee's derivative) comes through the context object it is handed.
"""
from mjax.passes.rules.tables import (BATCH, JVP, LOWER, SHARD, TRANSPOSE, LowerCtx,
                                      RuleTable, lowering)
from mjax.passes.rules import elementwise, structural, reductions, indexing  # noqa: F401
from mjax.passes.rules import bessel  # noqa: F401  (bessel_i0e, bessel_i1e)
from mjax.passes.rules import dot  # noqa: F401  (dot_general)
from mjax.passes.rules import convolution, windowed, sorting  # noqa: F401
from mjax.passes.rules import control_flow  # noqa: F401
from mjax.passes.rules import region_reductions  # noqa: F401  (after control_flow)
from mjax.passes.rules import linalg, linalg_lapack  # noqa: F401
from mjax.passes.rules import collectives  # noqa: F401
from mjax.passes.rules import sharding  # noqa: F401
from mjax.passes.rules import stacking  # noqa: F401  (stack, unstack)
from mjax.passes.rules import random  # noqa: F401
from mjax.passes.rules import callbacks  # noqa: F401
from mjax.passes.rules import export  # noqa: F401
from mjax.passes.rules import state  # noqa: F401  (Pallas refs)
from mjax.passes.rules import checkify  # noqa: F401  (check, checkify)
from mjax.passes.rules import transforms, reductions_ad, indexing_ad  # noqa: F401
from mjax.passes.rules import control_flow_ad  # noqa: F401  (cond, while, scan)
from mjax.passes.rules import pallas  # noqa: F401  (pallas_call)
from mjax.passes.rules import manual  # noqa: F401  (manual_computation; after pallas)
from mjax.passes.rules import pallas_tpu  # noqa: F401  (DMAs, semaphores, run_scoped)
from mjax.passes.rules import pallas_tpu_packing  # noqa: F401  (stochastic_round, (un)pack)
from mjax.passes.rules import pallas_tpu_mxu  # noqa: F401  (explicit MXU matmul ops)
from mjax.passes.rules import pallas_remote  # noqa: F401  (remote_update)
from mjax.passes.rules import tpu_kernels  # noqa: F401  (tpu_custom_call)
from mjax.passes.rules import xla_metadata  # noqa: F401  (xla_metadata_value)
from mjax.passes.rules import shard_map  # noqa: F401  (EXPAND[ShardMapOp])

__all__ = ["BATCH", "JVP", "LOWER", "SHARD", "TRANSPOSE", "LowerCtx", "RuleTable",
           "lowering"]
