"""JAX: jax.extend.mlir: jaxlib's MLIR bindings (`ir`, `passmanager`, `dialects`) and its
StableHLO helpers (portable artifacts, HLO -> StableHLO)."""
from jaxlib import _jax

from mjax.extend.mlir import dialects, ir, passmanager  # noqa: F401

deserialize_portable_artifact = _jax.mlir.deserialize_portable_artifact
serialize_portable_artifact = _jax.mlir.serialize_portable_artifact
refine_polymorphic_shapes = _jax.mlir.refine_polymorphic_shapes
hlo_to_stablehlo = _jax.mlir.hlo_to_stablehlo


def lower_with_sharding_in_types(*args, **kwargs):
    """JAX lowers a jaxpr equation by equation here; mjax lowers its dialect with
    passes (`mjax.passes`), so there is no per-equation lowering to call."""
    raise NotImplementedError(
        "jax.extend.mlir.lower_with_sharding_in_types: mjax lowers the jaxpr dialect to "
        "StableHLO with its --jaxpr-to-stablehlo pass, not equation by equation")
