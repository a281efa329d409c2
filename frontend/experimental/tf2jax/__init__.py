"""`mjax.experimental.tf2jax`: TensorFlow functions as mjax functions.

    fn, params = tf2jax.convert(tf.function(model), x)      # x: an example input
    y, params = fn(params, x)                                # mjax arrays
    g = mjax.grad(lambda p: fn(p, x)[0].sum())(params)       # also jit, vmap

The function's GraphDef is converted op by op through a table from TF op name to rule
(`ops/`: one module per family); variables become `params`, a dict keyed by name.
Like deepmind/tf2jax. Importing this module does not import TensorFlow; converting does.
"""
from mjax.experimental.tf2jax.convert import (convert, convert_from_restored,
                                              convert_functional)
from mjax.experimental.tf2jax.interpreter import UnsupportedOperationError

__all__ = ["UnsupportedOperationError", "convert", "convert_from_restored",
           "convert_functional"]
