"""The polymorphic_shapes examples of JAX's jax2tf README (jax/experimental/jax2tf/
README.md, "Shape-polymorphic conversion"), run with `python jax2tf_poly_cases.py jax|mjax`:
one JSON line per case, its results' shapes and dtypes or its error's classes.
test_jax2tf_shape_poly.py compares the two runs."""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

if sys.argv[1] == "jax":
    import jax.numpy as jnp
    from jax.experimental import jax2tf
else:
    import mjax.numpy as jnp
    from mjax.experimental import jax2tf

x, y, four_ones = np.ones(4, np.float32), np.ones(8, np.float32), np.ones(4)
conv = jax2tf.convert
CASES = {
    "reshape_4b": lambda: conv(lambda x: jnp.reshape(x, (x.shape[0] * x.shape[1],)),
                               polymorphic_shapes=["(b, 4)"])(np.ones((3, 4))),
    "dims_as_values": lambda: conv(lambda x: (x + x.shape[0] + jnp.sin(x.shape[0]),
                                              5. + x.shape[0],
                                              x.shape[0] - np.ones((5,), dtype=np.int32)),
                                   polymorphic_shapes=["b"])(np.ones(3)),
    "average": lambda: conv(lambda x: jnp.sum(x, axis=0) / x.shape[0],
                            polymorphic_shapes=["(v, _)"])(np.ones((3, 4))),
    "add_v_4": lambda: conv(lambda x, y: x + y,
                            polymorphic_shapes=["(v,)", "(4,)"])(four_ones, four_ones),
    "matmul_v4": lambda: conv(lambda x: jnp.matmul(x, x),
                              polymorphic_shapes=["(v, 4)"])(np.ones((4, 4))),
    "inconclusive": lambda: conv(lambda x: 0 if x.shape[0] + 1 >= x.shape[1] else 1,
                                 polymorphic_shapes=["(a, b)"])(np.ones((3, 4))),
    "implicit_constraint": lambda: conv(lambda x: x[0:16],
                                        polymorphic_shapes="b + 15, ...")(np.ones((20, 2))),
    "explicit_constraints": lambda: conv(lambda x: x[:x.shape[1], :16],
                                         polymorphic_shapes="(a, b)",
                                         polymorphic_constraints=("a >= b", "b >= 16"))(
                                             np.ones((20, 17))),
    "floordiv_slice": lambda: conv(lambda x: x[: 4 * (x.shape[0] // 4)],
                                   polymorphic_shapes=("b, ...",))(np.ones((7, 2))),
    "floordiv_constraint": lambda: conv(lambda x: x[: 4 * (x.shape[0] // 4)],
                                        polymorphic_shapes=("b, ...",),
                                        polymorphic_constraints=("b >= 4*floordiv(b, 4)",))(
                                            np.ones((7, 2))),
    "half_without_equality": lambda: conv(lambda x, y: x + y[:y.shape[0] // 2],
                                          polymorphic_shapes=("a", "b"))(x, y),
    "half_with_equality": lambda: conv(lambda x, y: x + y[:y.shape[0] // 2],
                                       polymorphic_shapes=("a", "b"),
                                       polymorphic_constraints=("floordiv(b, 2) == a",))(x, y),
    "sum_b_rest": lambda: conv(jnp.sum, polymorphic_shapes=["(b, ...)"])(np.ones((4, 5, 7))),
    "reshape_b1_b2": lambda: conv(lambda x: x.reshape(x.shape[0], -1),
                                  polymorphic_shapes=["(b1, b2, ...)"])(np.ones((4, 5, 6))),
    "reshape_even": lambda: conv(lambda x: x.reshape(2, -1),
                                 polymorphic_shapes=["(2*b, ...)"])(np.ones((4, 5, 7))),
    "reshape_uneven": lambda: conv(lambda x: x.reshape(2, -1),
                                   polymorphic_shapes=["(b, ...)"])(np.ones((4, 5, 7))),
    "signature_none": lambda: tf.function(
        conv(lambda x: jnp.sum(x, axis=(1, 2)), polymorphic_shapes=["(b, 28, 28)"]),
        autograph=False).get_concrete_function(
            tf.TensorSpec([None, 28, 28], tf.float32)).structured_outputs,
    "square_d": lambda: tf.function(conv(lambda x: x @ x, polymorphic_shapes=["(b, d, d)"]),
                                    autograph=False).get_concrete_function(
        tf.TensorSpec([None, None, None], tf.float32)).structured_outputs,
    "not_linear": lambda: conv(lambda x: x.shape[0], polymorphic_shapes=["a * a"])(np.ones(4)),
    "shape_assertion": lambda: conv(lambda x: x, polymorphic_shapes=["(b, b, 2*d)"])(
        np.ones((3, 3, 5))),
}
for name, case in CASES.items():
    try:
        out = tf.nest.map_structure(
            lambda t: [t.shape.as_list() if hasattr(t.shape, "as_list") else list(t.shape),
                       str(t.dtype)] if hasattr(t, "shape") else t, case())
        print(json.dumps({"case": name, "out": out}))
    except Exception as e:  # noqa: BLE001  (the error is the result)
        print(json.dumps({"case": name, "error": [c.__name__ for c in type(e).__mro__]}))
