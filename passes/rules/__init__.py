"""Per-family rule modules. Importing this package fills the tables in `tables.py`."""
from mjax.passes.rules.tables import (BATCH, JVP, LOWER, NOT_SUPPORTED, SHARD, TRANSPOSE,
                                      LowerCtx, lowering, not_supported)
from mjax.passes.rules import elementwise, structural, reductions, indexing  # noqa: F401
from mjax.passes.rules import convolution, windowed, sorting  # noqa: F401
from mjax.passes.rules import control_flow  # noqa: F401
from mjax.passes.rules import region_reductions  # noqa: F401  (after control_flow)
from mjax.passes.rules import linalg  # noqa: F401
from mjax.passes.rules import collectives  # noqa: F401
from mjax.passes.rules import sharding  # noqa: F401
from mjax.passes.rules import random  # noqa: F401
from mjax.passes.rules import callbacks  # noqa: F401
from mjax.passes.rules import export  # noqa: F401
from mjax.passes.rules import state  # noqa: F401  (Pallas refs)
from mjax.passes.rules import checkify  # noqa: F401  (check, checkify)

__all__ = ["BATCH", "JVP", "LOWER", "NOT_SUPPORTED", "SHARD", "TRANSPOSE", "LowerCtx", "lowering",
           "not_supported"]
