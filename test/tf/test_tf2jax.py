"""mjax.experimental.tf2jax: TF functions converted op by op, checked against TensorFlow
(outputs, GradientTape gradients, one SGD step) and under jit, grad and vmap."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.compiler.tf2xla.python import xla as tfxla  # noqa: E402

import mjax  # noqa: E402
import mjax.numpy as jnp  # noqa: E402
from mjax.experimental import tf2jax  # noqa: E402

RNG = np.random.default_rng(0)


def _f32(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def _check_op(tf_fn, *args, rtol=1e-5, atol=1e-5, eager=False):
    """The converted function (under jit; also eagerly if asked) gives TF's outputs."""
    want = tf.nest.map_structure(lambda t: np.asarray(t), tf.function(tf_fn)(*args))
    fn = tf2jax.convert_functional(tf.function(tf_fn), *args)
    for f in ((fn, mjax.jit(fn)) if eager else (mjax.jit(fn),)):
        got = f(*args)
        tf.nest.assert_same_structure(want, got)
        for w, g in zip(tf.nest.flatten(want), tf.nest.flatten(got)):
            g = np.asarray(g)
            assert g.shape == w.shape, (g.shape, w.shape)
            if w.dtype == np.bool_ or np.issubdtype(w.dtype, np.integer):
                np.testing.assert_array_equal(g, w)
            else:
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


X = _f32(3, 4)
Y = _f32(3, 4)
POS = _f32(3, 4, lo=0.1, hi=2.0)
IMG = _f32(2, 7, 7, 3)
I32 = RNG.integers(-5, 6, (3, 4)).astype(np.int32)
J32 = RNG.integers(1, 4, (3, 4)).astype(np.int32)

UNARY = [tf.math.negative, tf.abs, tf.sign, tf.square, tf.exp, tf.math.expm1, tf.sin,
         tf.cos, tf.tanh, tf.sigmoid, tf.nn.relu, tf.nn.relu6, tf.nn.elu, tf.nn.selu,
         tf.nn.softplus, tf.nn.softsign, tf.math.erf, tf.floor, tf.math.ceil, tf.round,
         tf.math.atan, tf.math.asinh, tf.nn.softmax, tf.nn.log_softmax,
         lambda x: tf.nn.gelu(x, approximate=False), lambda x: tf.nn.gelu(x, True),
         lambda x: tf.nn.leaky_relu(x, 0.3), tf.math.is_nan, tf.math.is_finite,
         tf.stop_gradient, tf.zeros_like, tf.ones_like, tf.identity,
         lambda x: tf.identity_n([x, 2 * x]), tf.math.reciprocal, tf.math.l2_normalize]
POSITIVE = [tf.sqrt, tf.math.rsqrt, tf.math.log, tf.math.log1p, tf.math.lgamma,
            tf.math.digamma]
BINARY = [tf.add, tf.subtract, tf.multiply, tf.divide, tf.maximum, tf.minimum,
          tf.math.squared_difference, tf.math.atan2, tf.math.floordiv, tf.math.floormod,
          tf.math.divide_no_nan, tf.less, tf.less_equal, tf.greater, tf.greater_equal,
          tf.equal, tf.not_equal, lambda x, y: tf.add_n([x, y, x]),
          lambda x, y: tf.where(x > y, x, y), lambda x, y: tf.clip_by_value(x, -0.5, y)]
INT_BINARY = [tf.math.floordiv, tf.math.floormod, tf.truncatediv, tf.truncatemod,
              tf.add, tf.multiply, tf.bitwise.bitwise_and, tf.maximum]


@pytest.mark.parametrize("op", UNARY, ids=lambda f: getattr(f, "__name__", "lambda"))
def test_unary_ops(op):
    _check_op(op, X, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("op", POSITIVE, ids=lambda f: f.__name__)
def test_positive_domain_ops(op):
    _check_op(op, POS, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", BINARY, ids=lambda f: getattr(f, "__name__", "lambda"))
def test_binary_ops(op):
    _check_op(op, X, POS)


@pytest.mark.parametrize("op", INT_BINARY, ids=lambda f: f.__name__)
def test_integer_binary_ops(op):
    _check_op(op, I32, J32)


def test_pow_logical_cast():
    _check_op(lambda x, y: tf.pow(x, y), POS, X)
    _check_op(lambda x, y: tf.logical_and(x > 0, y > 0) | tf.logical_not(x > y), X, Y)
    _check_op(lambda x: (tf.cast(x * 10, tf.int32), tf.cast(x > 0, tf.float32),
                         tf.cast(I32, tf.bool)), X)


@pytest.mark.parametrize("reduce", [tf.reduce_sum, tf.reduce_mean, tf.reduce_max,
                                    tf.reduce_min, tf.reduce_prod])
def test_reductions(reduce):
    _check_op(lambda x: (reduce(x), reduce(x, axis=1), reduce(x, axis=[0], keepdims=True),
                         reduce(x, axis=-1)), X)


def test_bool_and_arg_reductions():
    _check_op(lambda x: (tf.reduce_all(x > 0, axis=1), tf.reduce_any(x > 0),
                         tf.argmax(x, axis=1), tf.argmin(x, axis=0, output_type=tf.int32),
                         tf.reduce_mean(I32, axis=1), tf.math.cumsum(x, axis=1),
                         tf.math.cumsum(x, axis=0, exclusive=True, reverse=True),
                         tf.math.cumprod(x, axis=1, exclusive=True)), X)


def test_matmuls_and_einsum():
    a, b = _f32(2, 3, 4), _f32(2, 4, 5)
    _check_op(lambda x, y: (tf.matmul(y, x),
                            tf.matmul(x, y, transpose_a=True, transpose_b=True)),
              _f32(3, 4), _f32(5, 3))
    _check_op(lambda x, y: (tf.matmul(x, y), tf.matmul(y, x, adjoint_a=True,
                                                        adjoint_b=True),
                            tf.einsum("bij,bjk->bik", x, y), tf.einsum("bij->j", x)), a, b)


def test_shapes_reshape_transpose():
    _check_op(lambda x: (tf.reshape(x, [-1]), tf.reshape(x, [2, -1, 3]),
                         tf.transpose(x, [2, 0, 1]), tf.shape(x), tf.size(x), tf.rank(x),
                         tf.expand_dims(x, 1), tf.squeeze(tf.expand_dims(x, 0)),
                         tf.squeeze(x[:1], axis=0),
                         tf.reshape(x, tf.stack([tf.shape(x)[0], -1]))), _f32(2, 3, 3))


def test_concat_stack_split():
    _check_op(lambda x, y: (tf.concat([x, y], 0), tf.concat([x, y, x], axis=-1),
                            tf.stack([x, y], axis=1), tf.unstack(x, axis=1),
                            tf.split(x, 2, axis=1), tf.split(x, [1, -1, 1], axis=1)), X, Y)


def test_strided_slice_all_masks():
    x = _f32(4, 5, 6)
    _check_op(lambda x: (x[1:3], x[:, ::2, -1], x[..., 1:], x[None, 1, :, tf.newaxis],
                         x[::-1, 3:0:-2], x[-1], x[1:, ..., ::3], x[:, tf.newaxis, ..., 0],
                         tf.slice(x, [1, 0, 2], [2, -1, 3]),
                         tf.strided_slice(x, [0, 1], [4, 5], [2, 2], begin_mask=1,
                                          end_mask=2)), x)


def test_gather_tile_fill_range_pad():
    idx = np.array([[0, 2], [1, 1]], np.int32)
    _check_op(lambda x, i: (tf.gather(x, i), tf.gather(x, i, axis=1),
                            tf.gather_nd(x, [[0, 1], [2, 3]]), tf.tile(x, [2, 1]),
                            tf.fill([2, 3], 1.5), tf.range(1, 10, 3),
                            tf.range(0.0, 1.0, 0.25),
                            tf.pad(x, [[1, 0], [2, 1]]),
                            tf.pad(x, [[1, 1], [2, 2]], constant_values=3.0),
                            tf.pad(x, [[1, 1], [2, 2]], mode="REFLECT"),
                            tf.pad(x, [[2, 1], [2, 3]], mode="SYMMETRIC"),
                            tf.one_hot(i, 4), tf.reverse(x, [1]),
                            tf.broadcast_to(x[:1], [2, 3, 4])), X, idx, eager=True)


def test_select_v1():
    @tf.function
    def f(c, x, y):
        return tf.raw_ops.Select(condition=c, x=x, y=y)
    _check_op(f, np.array([True, False, True]), X, Y)


def test_nn_conv_pool():
    w = _f32(3, 3, 3, 4)
    dw = _f32(3, 3, 3, 2)
    _check_op(lambda x: (tf.nn.conv2d(x, w, 1, "SAME"), tf.nn.conv2d(x, w, 2, "VALID"),
                         tf.nn.conv2d(x, w, 1, [[0, 0], [1, 2], [0, 1], [0, 0]],
                                      dilations=2),
                         tf.nn.depthwise_conv2d(x, dw, [1, 1, 1, 1], "SAME"),
                         tf.nn.max_pool2d(x, 2, 2, "VALID"),
                         tf.nn.max_pool2d(x, 3, 2, "SAME"),
                         tf.nn.avg_pool2d(x, 2, 2, "VALID"),
                         tf.nn.avg_pool2d(x, 3, 2, "SAME"),
                         tf.nn.bias_add(x, [1.0, 2.0, 3.0])), IMG, rtol=1e-4, atol=1e-5)


def test_fused_batch_norm_inference_and_training():
    scale, offset, mean, var = _f32(3), _f32(3), _f32(3), _f32(3, lo=0.5, hi=1.5)

    def f(x):
        inf = tf.raw_ops.FusedBatchNormV3(x=x, scale=scale, offset=offset, mean=mean,
                                          variance=var, epsilon=1e-3, is_training=False)
        tr = tf.raw_ops.FusedBatchNormV3(x=x, scale=scale, offset=offset, mean=mean,
                                         variance=var, epsilon=1e-3, is_training=True,
                                         exponential_avg_factor=0.5)
        return inf[0], tr[0], tr[1], tr[2]
    _check_op(f, IMG, rtol=1e-4, atol=1e-5)


def test_conv_transpose_and_resize():
    w = _f32(3, 3, 2, 3)
    _check_op(lambda x: (tf.nn.conv2d_transpose(x, w, [2, 15, 15, 2], 2, "VALID"),
                         tf.nn.conv2d_transpose(x, w, [2, 14, 14, 2], 2, "SAME"),
                         tf.image.resize(x, (5, 11), method="nearest"),
                         tf.image.resize(x, (5, 11), method="bilinear"),
                         tf.compat.v1.image.resize_bilinear(x, (4, 9), align_corners=True),
                         tf.compat.v1.image.resize_nearest_neighbor(x, (9, 4))),
              IMG, rtol=1e-4, atol=1e-5, eager=True)


def test_dilated_conv_transpose():
    # TF's CPU kernel for a dilated conv2d_transpose exists only in its oneDNN build (elsewhere:
    # "Current CPU implementations do not yet support dilation rates larger than 1"), so the
    # reference is the same transpose with the kernel's holes written out as zeros.
    w = _f32(3, 3, 2, 3)
    holes = np.zeros((5, 5, 2, 3), np.float32)
    holes[::2, ::2] = w
    want = np.asarray(tf.nn.conv2d_transpose(IMG, holes, [2, 11, 11, 2], 1, "VALID"))
    fn = tf2jax.convert_functional(tf.function(
        lambda x: tf.nn.conv2d_transpose(x, w, [2, 11, 11, 2], 1, "VALID", dilations=2)), IMG)
    for f in (fn, mjax.jit(fn)):
        np.testing.assert_allclose(np.asarray(f(IMG)), want, rtol=1e-4, atol=1e-5)


def test_losses_sorting_segments_scatters():
    labels = np.array([1, 0, 3], np.int32)
    _check_op(lambda x, y: (tf.nn.softmax_cross_entropy_with_logits(tf.nn.softmax(y), x),
                            tf.nn.sparse_softmax_cross_entropy_with_logits(labels, x),
                            tf.nn.sigmoid_cross_entropy_with_logits(tf.sigmoid(y), x),
                            tf.math.top_k(x, 2), tf.sort(x, axis=0), tf.argsort(x),
                            tf.norm(x), tf.math.reduce_euclidean_norm(x, 1),
                            tf.math.unsorted_segment_sum(x, [0, 2, 0], 3),
                            tf.math.unsorted_segment_max(x, [1, 1, 0], 2),
                            tf.tensor_scatter_nd_update(x, [[0, 1], [2, 2]], [5.0, 6.0]),
                            tf.tensor_scatter_nd_add(x, [[1]], y[:1]),
                            tf.scatter_nd([[1], [3]], [1.0, 2.0], [5]),
                            tf.gather(x, [[0, 1], [2, 3], [1, 1]], batch_dims=1, axis=1),
                            tf.linalg.band_part(x, 1, 0), tf.linalg.band_part(x, 0, -1)),
              X, Y)


def test_map_fn_scan_foldl():
    _check_op(lambda x: (tf.map_fn(lambda r: tf.reduce_sum(r) * r, x),
                         tf.scan(lambda a, r: a * 0.5 + r, x),
                         tf.foldl(lambda a, r: a + r, x)), X, eager=True)


def test_linalg():
    a = _f32(2, 3, 3) + 3 * np.eye(3, dtype=np.float32)
    spd = a @ np.swapaxes(a, -1, -2)
    b = _f32(2, 3, 2)
    _check_op(lambda a, s, b: (tf.linalg.inv(a), tf.linalg.det(a), tf.linalg.slogdet(a),
                               tf.linalg.cholesky(s), tf.linalg.solve(a, b),
                               tf.linalg.solve(a, b, adjoint=True),
                               tf.linalg.triangular_solve(tf.linalg.cholesky(s), b),
                               tf.linalg.triangular_solve(a, b, lower=False, adjoint=True),
                               tf.linalg.diag_part(a), tf.linalg.diag(b[..., 0]),
                               tf.linalg.set_diag(a, b[..., 0] * 0 + 7.0),
                               tf.linalg.trace(a)),
              a, spd, b, rtol=2e-4, atol=2e-5)


def test_more_math_and_nn_ops():
    vol = _f32(1, 4, 4, 4, 2)
    k3 = _f32(2, 2, 2, 2, 3)
    k2 = _f32(3, 3, 3, 2)
    _check_op(lambda x, img: (
        tf.math.cumulative_logsumexp(x, 1),
        tf.math.cumulative_logsumexp(x, 0, exclusive=True, reverse=True),
        tf.math.erfinv(x * 0.5), tf.math.ndtri(tf.abs(x) * 0.5 + 0.1),
        tf.abs(tf.complex(x, 2 * x)), tf.math.angle(tf.complex(x, x)),
        tf.math.segment_sum(x, [0, 0, 2]), tf.math.segment_max(x, [0, 1, 1]),
        tf.math.in_top_k([1, 0, 3], x, 2),
        tf.reverse_sequence(x, [1, 4, 3], seq_axis=1, batch_axis=0),
        tf.nn.local_response_normalization(img, depth_radius=1),
        tf.nn.conv3d(vol, k3, [1] * 5, "SAME"), tf.nn.max_pool3d(vol, 2, 2, "VALID"),
        tf.nn.atrous_conv2d(img, k2, 2, "SAME"),
        tf.nn.space_to_depth(img[:, :6, :6], 2),
        tf.nn.depth_to_space(tf.tile(img, [1, 1, 1, 4])[..., :8], 2)), X, IMG,
        rtol=1e-4, atol=1e-5)


# ---- Keras models -----------------------------------------------------------------------------
def _mlp():
    keras.utils.set_random_seed(1)
    return keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="relu"),
                             keras.layers.Dense(8, activation="tanh"),
                             keras.layers.Dense(3, activation="softmax")])


def _cnn():
    keras.utils.set_random_seed(2)
    return keras.Sequential([
        keras.Input((8, 8, 3)),
        keras.layers.Conv2D(4, 3, padding="same", activation="relu"),
        keras.layers.BatchNormalization(),
        keras.layers.MaxPooling2D(),
        keras.layers.DepthwiseConv2D(3, padding="same"),
        keras.layers.AveragePooling2D(2),
        keras.layers.Flatten(),
        keras.layers.Dense(5, activation="gelu"),
        keras.layers.Dense(2)])


def _tf_loss(model, x, y):
    return tf.reduce_mean(tf.square(model(x, training=False) - y))


@pytest.mark.parametrize("make,shape,nout", [(_mlp, (5, 6), 3), (_cnn, (2, 8, 8, 3), 2)],
                         ids=["mlp", "cnn"])
def test_keras_model_outputs_gradients_and_sgd_step(make, shape, nout):
    model = make()
    x, y = _f32(*shape), _f32(shape[0], nout)
    fn, params = tf2jax.convert(tf.function(lambda x: model(x, training=False)), x)
    by_name = {v.path: v for v in model.variables}
    assert set(params) == set(by_name)

    out, new_params = fn(params, x)
    np.testing.assert_allclose(np.asarray(out), model(x, training=False).numpy(),
                               rtol=1e-5, atol=1e-5)
    assert set(new_params) == set(params)

    def loss(p, x, y):
        return jnp.mean((fn(p, x)[0] - y) ** 2)
    grads = mjax.grad(loss)(params, x, y)
    train = [v for v in model.trainable_variables]
    with tf.GradientTape() as tape:
        tf_loss = _tf_loss(model, x, y)
    tf_grads = dict(zip([v.path for v in train], tape.gradient(tf_loss, train)))
    for k, g in tf_grads.items():
        np.testing.assert_allclose(np.asarray(grads[k]), g.numpy(), rtol=1e-4, atol=1e-6)
    # Non-trainable variables (batch norm statistics) do not reach the loss in inference
    # mode through anything but the normalization: their gradients exist, like TF's would.
    lr = 0.1

    @mjax.jit
    def sgd_step(p, x, y):
        g = mjax.grad(loss)(p, x, y)
        return {k: (p[k] - lr * g[k]) if k in tf_grads else p[k] for k in p}
    stepped = sgd_step(params, x, y)
    for v in train:
        v.assign_sub(lr * tf_grads[v.path])
    for k, v in by_name.items():
        np.testing.assert_allclose(np.asarray(stepped[k]), v.numpy(), rtol=1e-5, atol=1e-6)
    out2, _ = fn(stepped, x)
    np.testing.assert_allclose(np.asarray(out2), model(x, training=False).numpy(),
                               rtol=1e-5, atol=1e-5)


def test_grad_wrt_inputs_matches_tape():
    model = _mlp()
    x = _f32(5, 6)
    fn, params = tf2jax.convert(tf.function(lambda x: model(x)), x)
    g = mjax.grad(lambda x: jnp.sum(fn(params, x)[0] ** 2))(x)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        s = tf.reduce_sum(model(xt) ** 2)
    np.testing.assert_allclose(np.asarray(g), tape.gradient(s, xt).numpy(), rtol=1e-4,
                               atol=1e-6)


def test_vmap_over_converted_function():
    model = _mlp()
    one = _f32(1, 6)
    fn, params = tf2jax.convert(tf.function(lambda x: tf.reduce_sum(model(x), axis=-1)), one)
    batch = _f32(7, 1, 6)
    got = mjax.vmap(lambda x: fn(params, x)[0])(batch)
    want = np.stack([tf.reduce_sum(model(b), axis=-1).numpy() for b in batch])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)

    # Control flow under vmap: a batched predicate and a per-example trip count.
    @tf.function
    def f(x, n):
        y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2, lambda: -x)
        return tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a + y),
                             [tf.constant(0), tf.zeros_like(x)])[1]
    x, n = _f32(5, 3), np.arange(5, dtype=np.int32)
    got = mjax.vmap(tf2jax.convert_functional(f, x[0], n[0]))(x, n)
    want = np.stack([f(a, b).numpy() for a, b in zip(x, n)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


@pytest.mark.parametrize("layer", ["SimpleRNN", "LSTM", "GRU"])
def test_keras_embedding_and_rnn(layer):
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input((5,), dtype="int32"),
                              keras.layers.Embedding(10, 4),
                              getattr(keras.layers, layer)(3)])
    tokens = RNG.integers(0, 10, (2, 5)).astype(np.int32)
    fn, params = tf2jax.convert(tf.function(lambda t: model(t)), tokens)
    for f in (fn, mjax.jit(fn)):
        np.testing.assert_allclose(np.asarray(f(params, tokens)[0]), model(tokens).numpy(),
                                   rtol=1e-5, atol=1e-5)
    # The time loop has a constant trip count: it runs as a scan, so reverse mode works.
    grads = mjax.jit(mjax.grad(lambda p: jnp.sum(jnp.sin(fn(p, tokens)[0]))))(params)
    with tf.GradientTape() as tape:
        s = tf.reduce_sum(tf.sin(model(tokens)))
    tf_grads = tape.gradient(s, model.trainable_variables)
    for v, g in zip(model.trainable_variables, tf_grads):
        np.testing.assert_allclose(np.asarray(grads[v.path]), tf.convert_to_tensor(g).numpy(),
                                   rtol=1e-4, atol=1e-6)


# ---- control flow, variables, errors ----------------------------------------------------------
def test_while_loop():
    @tf.function
    def f(x, n):
        i = tf.constant(0)
        acc = tf.zeros_like(x)

        def body(i, acc):
            return i + 1, acc * 0.5 + tf.sin(x) * tf.cast(i, tf.float32)
        _, acc = tf.while_loop(lambda i, acc: i < n, body, [i, acc])
        return acc
    n = np.int32(4)
    _check_op(f, X, n)
    fn = tf2jax.convert_functional(f, X, n)
    np.testing.assert_allclose(np.asarray(fn(X, np.int32(7))), f(X, 7).numpy(), rtol=1e-5)
    # A trip count known at conversion (n closed over) makes a scan: grad works, vs TF.
    g_fixed = tf2jax.convert_functional(tf.function(lambda x: f(x, 5)), X)
    g = mjax.grad(lambda x: jnp.sum(g_fixed(x)))(X)
    xt = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        s = tf.reduce_sum(f(xt, 5))
    np.testing.assert_allclose(np.asarray(g), tape.gradient(s, xt).numpy(), rtol=1e-5)


def test_cond():
    @tf.function
    def f(x):
        return tf.cond(tf.reduce_sum(x) > 0, lambda: tf.exp(x), lambda: x * 2.0 + 1.0)
    fn = mjax.jit(tf2jax.convert_functional(f, X))
    for x in (X, -np.abs(X), np.abs(X)):
        np.testing.assert_allclose(np.asarray(fn(x)), f(x).numpy(), rtol=1e-6)
    g = mjax.grad(lambda x: jnp.sum(fn(x)))(np.abs(X))
    np.testing.assert_allclose(np.asarray(g), np.exp(np.abs(X)), rtol=1e-6)


def test_nested_function_call_and_captured_constant():
    c = tf.constant([1.0, 2.0, 3.0, 4.0])

    @tf.function
    def inner(x):
        return x * c

    @tf.function
    def outer(x):
        return inner(x) + inner(2 * x)
    _check_op(outer, X)


def test_resource_gather_and_variable_update():
    table = tf.Variable(_f32(6, 3), name="table")
    counter = tf.Variable(0.0, name="counter")

    @tf.function
    def f(ids):
        counter.assign_add(1.0)
        return tf.nn.embedding_lookup(table, ids) * counter.read_value()
    ids = np.array([[0, 5], [2, 2]], np.int32)
    fn, params = tf2jax.convert(f, ids)
    assert set(params) == {"table", "counter"}
    out, new = fn(params, ids)
    np.testing.assert_allclose(np.asarray(out), np.asarray(params["table"])[ids] * 1.0)
    assert float(new["counter"]) == float(params["counter"]) + 1.0
    g = mjax.grad(lambda p: jnp.sum(fn(p, ids)[0]))(params)
    want = np.zeros((6, 3), np.float32)
    np.add.at(want, ids.reshape(-1), 1.0 * (float(params["counter"]) + 1.0))
    np.testing.assert_allclose(np.asarray(g["table"]), want)


def test_xla_call_module_converts_back():
    def f(x, y):
        return jnp.sin(x) @ y + 1.0
    x, y = _f32(3, 4), _f32(4, 2)
    exp = mjax.export.export(mjax.jit(f))(x, y)

    @tf.function
    def tf_f(x, y):
        return tfxla.call_module([x, y], version=exp.calling_convention_version,
                                 module=exp.mlir_module_serialized, Sout=[(3, 2)],
                                 Tout=[tf.float32], platforms=["CPU"])[0]
    fn = tf2jax.convert_functional(tf_f, x, y)
    np.testing.assert_allclose(np.asarray(fn(x, y)), np.asarray(f(x, y)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(mjax.jit(fn)(x, y)), tf_f(x, y).numpy(),
                               rtol=1e-6)
    # A bare module carries no VJP: differentiating says so instead of guessing.
    with pytest.raises(Exception, match="No VJP is available"):
        mjax.grad(lambda x: jnp.sum(fn(x, y)))(x)


def test_functions_with_unknown_dimensions_convert_for_each_size():
    # A TF function traced with None in its signature, and one holding a polymorphic
    # module (jax2tf's polymorphic_shapes): each call brings its sizes.
    plain = tf.function(lambda x: tf.reduce_sum(tf.sin(x) * 2.0, axis=0),
                        input_signature=[tf.TensorSpec((None, 3), tf.float32)])
    from mjax.experimental import jax2tf
    poly = tf.function(jax2tf.convert(lambda x: jnp.tanh(x).sum(0),
                                      polymorphic_shapes=["(b, 3)"]),
                       autograph=False, input_signature=[tf.TensorSpec((None, 3), tf.float32)])
    for f_tf, ref, dref in ((plain, lambda x: 2 * np.sin(x).sum(0), lambda x: 2 * np.cos(x)),
                            (poly, lambda x: np.tanh(x).sum(0),
                             lambda x: 1 - np.tanh(x) ** 2)):
        fn, params = tf2jax.convert(f_tf, tf.TensorSpec((None, 3), tf.float32))
        for n in (1, 7):
            x = _f32(n, 3)
            np.testing.assert_allclose(np.asarray(fn(params, x)[0]), ref(x), rtol=1e-5)
            g = mjax.grad(lambda x: jnp.sum(fn(params, x)[0]))(x)
            np.testing.assert_allclose(np.asarray(g), dref(x), rtol=1e-5, atol=1e-6)


def test_unknown_op_error_names_op_node_and_place():
    @tf.function
    def f(x):
        return tf.raw_ops.Bucketize(input=x, boundaries=[0.0, 0.5]) + 1
    with pytest.raises(tf2jax.UnsupportedOperationError,
                       match=r"'Bucketize' \(node 'Bucketize' in the "
                             r"graph of '__inference_f_\d+'"):
        tf2jax.convert_functional(f, _f32(2, 3, 3))

    @tf.function
    def g(x):
        return tf.cond(x[0, 0] > 0, lambda: tf.raw_ops.Bucketize(input=x[0], boundaries=[0.]),
                       lambda: tf.cast(x[0], tf.int32))
    with pytest.raises(tf2jax.UnsupportedOperationError,
                       match=r"'Bucketize' \(node '.*' in function '.*true"):
        tf2jax.convert_functional(g, _f32(3, 3))

    # A rule's own error keeps its type and gains a note naming the node.
    @tf.function
    def h(x):
        return tf.reshape(x, [5, -1])
    fn = tf2jax.convert_functional(h, _f32(5, 2))
    with pytest.raises(ValueError, match="argument 0") as info:
        fn(_f32(4, 2))
    fn2 = tf2jax.convert_functional(tf.function(lambda x, n: tf.reshape(x, [n, -1])),
                                    _f32(4, 2), np.int32(2))
    np.testing.assert_allclose(np.asarray(fn2(_f32(4, 2) * 0, np.int32(2))), np.zeros((2, 4)))
    with pytest.raises(ValueError) as info:     # under jit, n is only known at run time
        mjax.jit(fn2)(_f32(4, 2), np.int32(2))
    assert "the shape of Reshape must be a constant" in str(info.value)
    assert any("'Reshape'" in n and "graph of" in n for n in info.value.__notes__)


def test_shape_mismatch_and_functional_with_variables_raise():
    model = _mlp()
    fn, params = tf2jax.convert(tf.function(lambda x: model(x)), _f32(5, 6))
    with pytest.raises(ValueError, match=r"argument 0 .* shape \(4, 6\).*\(5, 6\)"):
        fn(params, _f32(4, 6))
    with pytest.raises(ValueError, match="captures the variables"):
        tf2jax.convert_functional(tf.function(lambda x: model(x)), _f32(5, 6))


def test_docs_example():
    """docs/tf2jax.md's usage example runs, and what it computes is right."""
    import pathlib
    import re
    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "tf2jax.md").read_text()
    code = re.search(r"<!-- test: tf2jax-usage -->\n```python\n(.*?)```", text, re.S).group(1)
    env = {}
    exec(compile(code, "docs/tf2jax.md", "exec"), env)
    model, x = env["model"], env["x"]
    np.testing.assert_allclose(np.asarray(env["out"]), model(x).numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(np.asarray(env["per_example"]),
                               np.asarray(env["fn"](env["params"], x)[0]), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(np.asarray(env["y"]), np.sin(np.cos(x)), rtol=1e-6)
    # One SGD step on the zero target moved the params along TF's gradient.
    fn, p0 = tf2jax.convert(tf.function(lambda x: model(x)), x)
    y0 = np.zeros((16, 2), np.float32)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y0) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    for v, g in zip(model.trainable_variables, grads):
        np.testing.assert_allclose(np.asarray(env["params"][v.path]),
                                   v.numpy() - 0.1 * g.numpy(), rtol=1e-5, atol=1e-6)


def test_pytree_kwargs_and_static_python_arguments():
    @tf.function
    def f(a, b, scale, *, d):
        return {"sum": a + b["u"] * scale, "prod": (a * d, b["v"])}
    a, u, v, d = _f32(3), _f32(3), _f32(2), _f32(3)
    fn = tf2jax.convert_functional(f, a, {"v": v, "u": u}, 3.0, d=d)
    a2, u2, v2, d2 = _f32(3), _f32(3), _f32(2), _f32(3)
    got = mjax.jit(fn, static_argnums=2)(a2, {"u": u2, "v": v2}, 3.0, d=d2)
    want = f(a2, {"u": u2, "v": v2}, 3.0, d=d2)
    assert set(got) == {"sum", "prod"} and isinstance(got["prod"], tuple)
    np.testing.assert_allclose(np.asarray(got["sum"]), want["sum"].numpy(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got["prod"][0]), want["prod"][0].numpy())
    np.testing.assert_allclose(np.asarray(got["prod"][1]), v2)


def test_saved_model_round_trip(tmp_path):
    model = _mlp()
    module = tf.Module()
    module.vars = model.variables
    module.f = tf.function(lambda x: model(x), input_signature=[tf.TensorSpec((4, 6))])
    tf.saved_model.save(module, str(tmp_path / "m"))
    restored = tf.saved_model.load(str(tmp_path / "m"))
    x = _f32(4, 6)
    fn, params = tf2jax.convert(restored.f, x)
    assert set(params) == {v.path for v in model.variables}
    np.testing.assert_allclose(np.asarray(mjax.jit(fn)(params, x)[0]), model(x).numpy(),
                               rtol=1e-5, atol=1e-6)
    fn2, params2 = tf2jax.convert_from_restored(restored.f)     # its one signature
    assert set(params2) == set(params)
    np.testing.assert_allclose(np.asarray(fn2(params2, x)[0]), model(x).numpy(),
                               rtol=1e-5, atol=1e-6)


def test_batch_norm_training_updates_moving_statistics():
    keras.utils.set_random_seed(4)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3),
                              keras.layers.BatchNormalization(momentum=0.5)])
    x = _f32(8, 4)
    fn, params = tf2jax.convert(tf.function(lambda x: model(x, training=True)), x)
    before = {v.path: v.numpy() for v in model.variables}
    out, new = mjax.jit(fn)(params, x)
    want = model(x, training=True)          # TF updates its moving statistics too
    np.testing.assert_allclose(np.asarray(out), want.numpy(), rtol=1e-5, atol=1e-6)
    moving = [v for v in model.variables if "moving" in v.path]
    assert moving
    for v in model.variables:
        np.testing.assert_allclose(np.asarray(new[v.path]), v.numpy(), rtol=1e-6,
                                   atol=1e-7)
    assert any(not np.allclose(before[v.path], v.numpy()) for v in moving)


def _masked_rnn():
    return keras.Sequential([keras.Input((6,), dtype="int32"),
                             keras.layers.Embedding(10, 4, mask_zero=True),
                             keras.layers.LSTM(3, return_sequences=True),
                             keras.layers.GRU(2, reset_after=False, go_backwards=True)])


def _functional_attention():
    L = keras.layers
    inp = keras.Input((6, 5))
    a = L.Attention()([inp, inp])
    b = L.Concatenate()([a, L.LayerNormalization()(inp)])
    c = L.Add()([L.Dense(10)(b), b])
    out = L.Conv1D(3, 2, strides=2)(L.GroupNormalization(2)(c))
    return keras.Model(inp, L.GlobalMaxPooling1D()(out))


def _upsampling_cnn():
    L = keras.layers
    return keras.Sequential([keras.Input((8, 8, 3)),
                             L.Conv2D(4, 3, strides=2, padding="same", use_bias=False),
                             L.BatchNormalization(), L.ReLU(max_value=6.0),
                             L.Conv2DTranspose(2, 3, strides=2, padding="same"),
                             L.UpSampling2D(interpolation="bilinear"),
                             L.GlobalAveragePooling2D(), L.Dense(3, activation="softmax")])


def _tokens():
    t = RNG.integers(1, 10, (2, 6)).astype(np.int32)
    t[0, 4:] = 0                                  # masked padding
    return t


@pytest.mark.parametrize("make,example", [
    (_masked_rnn, _tokens), (_functional_attention, lambda: _f32(2, 6, 5)),
    (_upsampling_cnn, lambda: _f32(2, 8, 8, 3))], ids=["masked_rnn", "attention", "upcnn"])
def test_keras_layer_zoo_outputs_and_gradients(make, example):
    keras.utils.set_random_seed(5)
    model, x = make(), example()
    fn, params = tf2jax.convert(tf.function(lambda a: model(a)), x)
    np.testing.assert_allclose(np.asarray(mjax.jit(fn)(params, x)[0]), model(x).numpy(),
                               rtol=1e-5, atol=1e-5)
    grads = mjax.jit(mjax.grad(lambda p: jnp.sum(jnp.sin(fn(p, x)[0]))))(params)
    with tf.GradientTape() as tape:
        s = tf.reduce_sum(tf.sin(model(x)))
    for v, g in zip(model.trainable_variables, tape.gradient(s, model.trainable_variables)):
        np.testing.assert_allclose(np.asarray(grads[v.path]), tf.convert_to_tensor(g).numpy(),
                                   rtol=1e-4, atol=1e-5)


def test_x64_keeps_tf_64_bit_dtypes():
    @tf.function
    def f(x, i):
        return tf.nn.relu(x) * 2 + tf.cast(i, x.dtype), tf.argmax(x, 1), tf.shape(i)
    x, i = RNG.uniform(size=(3, 4)), np.arange(4, dtype=np.int64)
    model = keras.Sequential([keras.Input((5,), dtype="int32"),
                              keras.layers.Embedding(10, 4), keras.layers.GRU(3)])
    tokens = RNG.integers(0, 10, (2, 5)).astype(np.int32)
    with mjax.enable_x64(True):
        got = mjax.jit(tf2jax.convert_functional(f, x, i))(x, i)
        fn, params = tf2jax.convert(tf.function(lambda t: model(t)), tokens)
        rnn = mjax.jit(fn)(params, tokens)[0]
    want = f(x, i)
    assert [g.dtype for g in got] == [np.float64, np.int64, np.int32]
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w.numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(rnn), model(tokens).numpy(), rtol=1e-5, atol=1e-6)


def test_random_ops_draw_from_the_rng_keyword():
    keras.utils.set_random_seed(6)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dropout(0.5)])
    x = _f32(50, 4, lo=1.0, hi=2.0)
    fn, params = tf2jax.convert(tf.function(lambda x: model(x, training=True)), x)
    with pytest.raises(ValueError, match="rng=mjax.random.key"):
        fn(params, x)
    f = mjax.jit(fn)
    y1, new1 = f(params, x, rng=mjax.random.key(1))
    y2, _ = f(params, x, rng=mjax.random.key(2))
    y1b, _ = f(params, x, rng=mjax.random.key(1))
    y1, y2 = np.asarray(y1), np.asarray(y2)
    kept = y1 != 0
    np.testing.assert_allclose(y1[kept], 2 * x[kept], rtol=1e-6)   # inverted dropout
    assert 0.35 < kept.mean() < 0.65
    assert (y1 != y2).any() and np.array_equal(y1, np.asarray(y1b))
    # The SeedGenerator's state advances as in TF.
    model(x, training=True)
    for v in model.variables:
        np.testing.assert_array_equal(np.asarray(new1[v.path]), v.numpy())

    draws = tf2jax.convert_functional(
        tf.function(lambda x: (tf.random.uniform([2000]), tf.random.normal([2000]),
                               tf.random.stateless_uniform([2000], seed=[1, 2]),
                               tf.random.truncated_normal([2000]),
                               tf.random.uniform([2000], 0, 5, dtype=tf.int32))), x)
    u, n, su, tn, ui = (np.asarray(d) for d in draws(x, rng=mjax.random.key(0)))
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.05
    assert abs(n.mean()) < 0.1 and abs(n.std() - 1) < 0.1
    assert 0 <= su.min() and su.max() < 1 and abs(su.mean() - 0.5) < 0.05
    assert np.abs(tn).max() <= 2 and abs(tn.mean()) < 0.1
    assert set(np.unique(ui)) == {0, 1, 2, 3, 4}


def test_data_dependent_shapes_convert_eagerly_only():
    f = tf.function(lambda x: (tf.where(x > 0), tf.unique(tf.cast(x * 3, tf.int32)[0])))
    x = np.array([[0.5, -1.0, 0.9, 0.4], [-0.2, 0.7, 0.0, 0.34]], np.float32)
    fn = tf2jax.convert_functional(f, x)
    got, want = fn(x), f(x)
    np.testing.assert_array_equal(np.asarray(got[0]), want[0].numpy())
    np.testing.assert_array_equal(np.asarray(got[1].y), want[1].y.numpy())
    np.testing.assert_array_equal(np.asarray(got[1].idx), want[1].idx.numpy())
    with pytest.raises(tf2jax.UnsupportedOperationError, match="depends on the input's "
                                                               "values"):
        mjax.jit(fn)(x)
