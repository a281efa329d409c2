"""An `XlaCallModule` node's StableHLO module as an `mjax.export.Exported`, and its call.

jax2tf stores a StableHLO portable artifact (MLIR bytecode from older producers is
accepted too); the node gives the result shapes and dtypes, the arguments give theirs.
Without the exported VJP (TF keeps the gradient outside the module) the call is not
differentiable: `mjax.grad` through it says so.
"""
from __future__ import annotations

import numpy as np

from mjax import export as _export
from mjax import tree_util
from mjax.dialect.types import ShapedArray


def _portable(module: bytes) -> bytes:
    """The module as a portable artifact (parsed and re-serialized if it is not one)."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import stablehlo as hlo
    from mjax.dialect import context
    with context():
        try:
            hlo.deserialize_portable_artifact(context(), module)
            return bytes(module)
        except Exception:   # noqa: BLE001  (not an artifact: plain bytecode or text)
            parsed = ir.Module.parse(module)
            return _export._portable_artifact(parsed)


def exported_from_module(module: bytes, in_avals, out_avals, platforms,
                         fun_name: str) -> _export.Exported:
    n = len(in_avals)
    return _export.Exported(
        fun_name=fun_name,
        in_tree=tree_util.tree_structure((tuple(range(n)), {})), in_avals=in_avals,
        out_tree=tree_util.tree_structure(list(range(len(out_avals)))),
        out_avals=out_avals,
        platforms=[_export._canonical_platform(p) for p in platforms] or ["cpu"],
        mlir_module_serialized=_portable(module))


def call_module(module: bytes, args, out_shapes, out_dtypes, platforms, fun_name):
    import mjax.numpy as jnp
    args = [jnp.asarray(a) for a in args]
    in_avals = [ShapedArray(tuple(a.shape), np.dtype(a.dtype)) for a in args]
    if any(s is None or any(d is None or d < 0 for d in s) for s in out_shapes):
        raise NotImplementedError(f"tf2jax: XlaCallModule '{fun_name}' has results of "
                                  f"unknown shape {out_shapes} (shape polymorphism is not "
                                  f"supported)")
    out_avals = [ShapedArray(tuple(s), np.dtype(t)) for s, t in zip(out_shapes, out_dtypes)]
    exp = exported_from_module(module, in_avals, out_avals, platforms, fun_name)
    return list(exp.call(*args))
