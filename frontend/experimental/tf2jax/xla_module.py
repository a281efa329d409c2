"""An `XlaCallModule` node's StableHLO module, called through `mjax.export`.

jax2tf stores a StableHLO portable artifact; `mjax.export.from_stablehlo` reads its
@main's signature. Without the exported VJP (TF keeps the gradient outside the module)
the call is not differentiable: `mjax.grad` through it says so.
"""
from __future__ import annotations

import numpy as np

import mjax.numpy as jnp
from mjax import export as _export
from mjax.tracing.core import aval_of_value


def call_module(module: bytes, args, out_shapes, out_dtypes, platforms, fun_name):
    args = [jnp.asarray(a) for a in args]
    # (a module with dynamic shapes, from jax2tf's polymorphic_shapes, is refined for
    # these arguments)
    exp = _export.from_stablehlo(module, platforms=platforms or ("cpu",), fun_name=fun_name,
                                 arg_avals=[aval_of_value(a) for a in args])
    want = [(tuple(s), np.dtype(t)) for s, t in zip(out_shapes, out_dtypes)]
    have = [(tuple(a.shape), np.dtype(a.dtype)) for a in exp.out_avals]
    # (None: a dimension TF leaves unknown)
    if want and not all(len(w[0]) == len(h[0]) and w[1] == h[1] and all(
            a is None or a == b for a, b in zip(w[0], h[0])) for w, h in zip(want, have)):
        raise ValueError(f"tf2jax: XlaCallModule '{fun_name}' declares results {want} but "
                         f"its module returns {have}")
    return list(exp.call(*args))
