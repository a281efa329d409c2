"""Every `jaxpr.*` op, grouped by family. Importing this package registers them all."""
from mjax.dialect.ops import elementwise, structural, reductions, indexing, transforms  # noqa: F401
from mjax.dialect.ops import convolution, windowed, sorting  # noqa: F401
from mjax.dialect.ops import control_flow  # noqa: F401
from mjax.dialect.ops import region_reductions  # noqa: F401  (after control_flow)
from mjax.dialect.ops import linalg  # noqa: F401
from mjax.dialect.ops import collectives  # noqa: F401
from mjax.dialect.ops import sharding  # noqa: F401  (after collectives)
from mjax.dialect.ops import shard_map  # noqa: F401  (jaxpr.shard_map)
from mjax.dialect.ops import random  # noqa: F401
from mjax.dialect.ops import callbacks  # noqa: F401
from mjax.dialect.ops import export  # noqa: F401
from mjax.dialect.ops import state, pallas  # noqa: F401  (Pallas: refs, pallas_call)
from mjax.dialect.ops import pallas_tpu  # noqa: F401  (Pallas TPU: DMAs, semaphores, run_scoped)
from mjax.dialect.ops import pallas_tpu_packing  # noqa: F401  (stochastic_round, (un)pack)
from mjax.dialect.ops import pallas_tpu_mxu  # noqa: F401  (explicit MXU matmul ops)
from mjax.dialect.ops import pallas_remote  # noqa: F401  (remote writes of interpreted kernels)
from mjax.dialect.ops import manual  # noqa: F401  (manual_computation: per-device kernels)
from mjax.dialect.ops import mosaic  # noqa: F401  (tpu_custom_call: hand-written Mosaic kernels)
from mjax.dialect.ops import checkify  # noqa: F401  (check, checkify)
from mjax.dialect.ops import user  # noqa: F401  (user-defined primitives)
