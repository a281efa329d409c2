"""An `Exported` as TF ops: one XlaCallModule op holding the serialized StableHLO, with a
`tf.custom_gradient` whose backward is the exported VJP, itself called the same way (so
higher orders work as far as the function is differentiable).
JAX: jax2tf._run_exported_as_tf, _make_custom_gradient_fn_tf.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import tensorflow as tf
from tensorflow.compiler.tf2xla.python import xla as tfxla

from mjax.specs import dtypes as _dtypes
from mjax import export as _export
from mjax.experimental.jax2tf.dtypes import to_tf_dtype
from mjax.export import Exported, is_symbolic_dim

_NO_GRADIENT = ("The jax2tf-converted function does not support gradients. Use "
                "`with_gradient` parameter to enable gradients")


def _is_inexact(dtype) -> bool:
    return dtype != _dtypes.float0 and _dtypes.issubdtype(dtype, np.inexact)


def _max_supported_version() -> int:
    try:
        return tfxla.call_module_maximum_supported_version()
    except AttributeError:   # older TF
        return 6


def xla_call_module(exported: Exported, args: Sequence[tf.Tensor]) -> list[tf.Tensor]:
    """One XlaCallModule op: flat TF tensors in (cast to the module's types), flat
    results out."""
    version = exported.calling_convention_version
    if version > _max_supported_version():
        raise NotImplementedError(
            f"XlaCallModule from this TensorFlow supports up to serialization version "
            f"{_max_supported_version()} but the module needs version {version}; upgrade "
            f"TensorFlow")
    args = [a if a.dtype == to_tf_dtype(aval.dtype) else tf.cast(a, to_tf_dtype(aval.dtype))
            for a, aval in zip(args, exported.in_avals)]
    _export._remember_shipped(exported)     # from_stablehlo of these bytes: with VJP
    res = tfxla.call_module(
        args, version=version, module=exported.mlir_module_serialized,
        Tout=[to_tf_dtype(a.dtype) for a in exported.out_avals],
        # (None: a symbolic dimension, known once TF refines the module for the inputs)
        Sout=[tuple(None if is_symbolic_dim(d) else d for d in a.shape)
              for a in exported.out_avals],
        platforms=[p.upper() for p in exported.platforms],
        disabled_checks=[str(c) for c in exported.disabled_safety_checks],
        function_list=(), has_token_input_output=False)
    return list(res)


def call_exported(exported: Exported, args: Sequence[tf.Tensor],
                  with_gradient: bool) -> list[tf.Tensor]:
    """The flat results of `exported` on flat TF tensors; differentiable by TF when
    `with_gradient`, else every result blocks gradients (PreventGradient)."""
    args = list(args)
    if not with_gradient:
        return [tf.raw_ops.PreventGradient(input=o, message=_NO_GRADIENT)
                for o in xla_call_module(exported, args)]
    if not args:     # nothing to differentiate (tf.custom_gradient needs an input)
        return xla_call_module(exported, args)

    @tf.custom_gradient
    def fun(*xs):
        outs = xla_call_module(exported, xs)

        def grad(*cts, variables=None):
            if variables:
                raise ValueError(f"jax2tf: unexpected variables read in the forward pass "
                                 f"of a converted function: {variables}")
            return _backward(exported, xs, outs, cts)
        return tuple(outs), grad
    return list(fun(*args))


def _backward(exported: Exported, xs, outs, cts) -> list:
    """Input cotangents from the exported VJP: None for inputs that are not inexact."""
    vjp = exported.vjp()
    fixed = []
    for ct, out, aval in zip(cts, outs, exported.out_avals):
        if not _is_inexact(aval.dtype):
            # Integer results have float0 cotangents: bool zeros for the module.
            fixed.append(tf.zeros(tf.shape(out), tf.bool))
        elif ct is None:     # an unconnected result
            fixed.append(tf.zeros_like(out))
        else:
            fixed.append(ct)
    with tf.name_scope("jax2tf_vjp"):
        in_cts = call_exported(vjp, list(xs) + fixed, with_gradient=True)
    return [ct if _is_inexact(aval.dtype) else None
            for ct, aval in zip(in_cts, exported.in_avals)]
