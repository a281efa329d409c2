"""An `XlaCallModule` node's StableHLO module, called through `mjax.export`.

jax2tf stores a StableHLO portable artifact; `mjax.export.from_stablehlo` reads its
@main's signature. Without the exported VJP (TF keeps the gradient outside the module)
the call is not differentiable: `mjax.grad` through it says so.
"""
from __future__ import annotations

import numpy as np

import mjax.numpy as jnp
from mjax import export as _export


def call_module(module: bytes, args, out_shapes, out_dtypes, platforms, fun_name):
    exp = _export.from_stablehlo(module, platforms=platforms or ("cpu",), fun_name=fun_name)
    want = [(tuple(s), np.dtype(t)) for s, t in zip(out_shapes, out_dtypes)]
    have = [(tuple(a.shape), np.dtype(a.dtype)) for a in exp.out_avals]
    if want and want != have:
        raise ValueError(f"tf2jax: XlaCallModule '{fun_name}' declares results {want} but "
                         f"its module returns {have}")
    return list(exp.call(*[jnp.asarray(a) for a in args]))
