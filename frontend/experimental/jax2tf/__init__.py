"""`mjax.experimental.jax2tf`: mjax functions as TensorFlow functions (XlaCallModule of
the exported StableHLO), for tf.function and SavedModel. Static shapes only.
JAX: jax.experimental.jax2tf. Usage: docs/tf.md.
"""
from mjax.experimental.jax2tf.converter import convert, eval_polymorphic_shape
from mjax.experimental.jax2tf.dtypes import dtype_of_val
from mjax.experimental.jax2tf.shapes import PolyShape
from mjax.export import DisabledSafetyCheck


def call_tf(callable_tf, has_side_effects=True, ordered=False, output_shape_dtype=None,
            call_tf_graph=False):
    """Calling TF from mjax is `mjax.experimental.tf2jax.convert`."""
    raise NotImplementedError("jax2tf.call_tf is not supported by mjax; convert the TF "
                              "function with mjax.experimental.tf2jax.convert instead")


__all__ = ["DisabledSafetyCheck", "PolyShape", "call_tf", "convert", "dtype_of_val",
           "eval_polymorphic_shape"]
