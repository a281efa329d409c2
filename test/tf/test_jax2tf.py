"""mjax.experimental.jax2tf: converted functions against mjax (numerics, dtypes, pytrees,
variables, control flow), tf.GradientTape against mjax.grad, SavedModels of an MLP (the
docs/tf.md example) and a CNN loaded in a fresh process without mjax."""
import json
import pathlib
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
import tensorflow as tf
from ml_dtypes import bfloat16

import mjax
import mjax.numpy as jnp
from mjax import export, lax
from mjax.experimental import jax2tf

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "tf.md"
RNG = np.random.default_rng(0)


def _doc_block(name: str) -> str:
    m = re.search(rf"<!-- test: {name} -->\n```python\n(.*?)```", DOC.read_text(), re.S)
    assert m, f"docs/tf.md has no block marked {name}"
    return m.group(1)


def _randn(*shape, dtype=np.float32):
    return RNG.normal(size=shape).astype(dtype)


def _close(tf_value, ref, rtol=1e-5, atol=1e-6):
    got = tf_value.numpy() if hasattr(tf_value, "numpy") else np.asarray(tf_value)
    ref = np.asarray(ref)
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    np.testing.assert_allclose(got.astype(np.float64) if got.dtype == bfloat16 else got,
                               ref.astype(np.float64) if ref.dtype == bfloat16 else ref,
                               rtol=rtol, atol=atol)


# ---- numerics ---------------------------------------------------------------------------
ELEMENTWISE = [
    ("sin_exp", lambda x, y: jnp.sin(x) * jnp.exp(-y * y)),
    ("where_max", lambda x, y: jnp.where(x > y, jnp.maximum(x, 0.5), y ** 3)),
    ("compare", lambda x, y: (x < y) & (y > 0)),
    ("integer", lambda x, y: (x * 10).astype(jnp.int32) // 3 + jnp.argmax(y)),
    ("logistic", lambda x, y: mjax.nn.sigmoid(x) + mjax.nn.gelu(y) - jnp.log1p(x * x)),
]


@pytest.mark.parametrize("name,f", ELEMENTWISE, ids=[n for n, _ in ELEMENTWISE])
def test_elementwise_matches_mjax_eagerly_and_in_tf_function(name, f):
    x, y = _randn(3, 5), _randn(3, 5)
    ref = f(x, y)
    f_tf = jax2tf.convert(f)
    _close(f_tf(x, y), ref)
    _close(f_tf(tf.constant(x), tf.constant(y)), ref)
    _close(tf.function(f_tf, autograph=False)(tf.constant(x), tf.constant(y)), ref)


def test_matmul_and_reductions_match_numpy_and_mjax():
    a, b = _randn(4, 6), _randn(6, 3)
    f = lambda a, b: (a @ b, jnp.einsum("ij,jk->ik", a, b).sum(axis=0), jnp.max(a, axis=1))
    outs = jax2tf.convert(f)(a, b)
    for got, ref, np_ref in zip(outs, f(a, b), (a @ b, (a @ b).sum(0), a.max(1))):
        _close(got, ref)
        np.testing.assert_allclose(got.numpy(), np_ref, rtol=1e-5, atol=1e-5)
    # mjax arrays are accepted as arguments as well.
    _close(jax2tf.convert(f)(jnp.asarray(a), b)[0], f(a, b)[0])


def _scan_cumsum(xs, c0):
    def body(c, x):
        c = c * 0.9 + x
        return c, jnp.sin(c)
    return lax.scan(body, c0, xs)


def _cond_fn(p, x):
    return lax.cond(p > 0, lambda x: jnp.cos(x) * 2.0, lambda x: x * x, x)


def _while_fn(x):
    return lax.fori_loop(0, 5, lambda i, c: c * 0.5 + jnp.sin(c), x)


def test_control_flow_scan_cond_loop_match_mjax():
    xs, c0 = _randn(6, 3), _randn(3)
    (c, ys), (c_ref, ys_ref) = jax2tf.convert(_scan_cumsum)(xs, c0), _scan_cumsum(xs, c0)
    _close(c, c_ref)
    _close(ys, ys_ref)
    x = _randn(4)
    cond_tf = tf.function(jax2tf.convert(_cond_fn), autograph=False)
    for p in (np.float32(1.0), np.float32(-1.0)):
        _close(cond_tf(tf.constant(p), tf.constant(x)), _cond_fn(p, x))
    _close(jax2tf.convert(_while_fn)(x), _while_fn(x))


def test_pytrees_of_inputs_and_outputs_and_kwargs():
    def f(params, xs, *, scale):
        h = xs[0] @ params["w"] + params["b"]
        return {"out": [h * scale, (xs[1].sum(), None)], "n": h.shape[0]}
    params = {"w": _randn(3, 2), "b": _randn(2)}
    xs = (_randn(4, 3), _randn(5))
    out = jax2tf.convert(f)(params, xs, scale=np.float32(2.0))
    ref = f(params, xs, scale=np.float32(2.0))
    assert set(out) == {"out", "n"} and isinstance(out["out"], list)
    _close(out["out"][0], ref["out"][0])
    _close(out["out"][1][0], ref["out"][1][0])
    assert out["out"][1][1] is None
    _close(out["n"], np.asarray(ref["n"], np.int32))
    # TF structures given directly: lists of tensors, dicts of variables.
    tf_params = {k: tf.Variable(v) for k, v in params.items()}
    out2 = jax2tf.convert(f)(tf_params, [tf.constant(xs[0]), tf.constant(xs[1])],
                             scale=tf.constant(2.0))
    _close(out2["out"][0], ref["out"][0])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, bfloat16, np.int8, np.uint32,
                                   np.int32, np.complex64, np.bool_])
def test_dtypes_map_both_ways(dtype):
    x = (_randn(2, 3) * 3).astype(dtype)
    f = lambda x: (x, x + x if dtype != np.bool_ else ~x)
    tf_x = tf.constant(x)
    assert tf_x.dtype == tf.as_dtype(dtype)
    same, doubled = jax2tf.convert(f)(tf_x)
    assert same.dtype == tf.as_dtype(dtype) and doubled.dtype == tf.as_dtype(dtype)
    _close(same, x)
    _close(doubled, f(x)[1], rtol=1e-2)
    same_np, _ = jax2tf.convert(f)(x)        # a NumPy array keeps its dtype too
    assert same_np.dtype == tf.as_dtype(dtype)
    _close(same_np, x)


def test_64_bit_types_follow_the_x64_flag():
    f = lambda i, x: (i * 2, x * 2)
    i64, f64 = np.arange(3, dtype=np.int64), np.linspace(0, 1, 3)
    with mjax.enable_x64(False):
        i_out, x_out = jax2tf.convert(f)(tf.constant(i64), tf.constant(f64))
        assert (i_out.dtype, x_out.dtype) == (tf.int32, tf.float32)   # as JAX without x64
        _close(i_out, (i64 * 2).astype(np.int32))
        assert jax2tf.dtype_of_val(f64) == tf.float32
        assert jax2tf.dtype_of_val(3) == tf.int32
        # A float64 variable: cast to float32 for the call, its gradient cast back.
        v = tf.Variable(f64)
        with tf.GradientTape() as tape:
            y = jax2tf.convert(lambda x: jnp.sum(jnp.sin(x)))(v)
        g = tape.gradient(y, v)
        assert g.dtype == tf.float64
        np.testing.assert_allclose(g.numpy(), np.cos(f64), rtol=1e-6)
    with mjax.enable_x64(True):
        i_out, x_out = jax2tf.convert(f)(tf.constant(i64), tf.constant(f64))
        assert jax2tf.dtype_of_val(f64) == tf.float64
    assert (i_out.dtype, x_out.dtype) == (tf.int64, tf.float64)
    _close(x_out, f64 * 2)


# ---- gradients --------------------------------------------------------------------------
def _loss(params, x):
    h = jnp.tanh(x @ params["w"] + params["b"])
    return jnp.sum(h * h), jnp.argmax(h)     # an integer output too


def test_gradient_tape_on_variables_matches_mjax_grad():
    params = {"w": _randn(3, 4), "b": _randn(4)}
    x = _randn(5, 3)
    ref_p, ref_x = mjax.grad(lambda p, x: _loss(p, x)[0], argnums=(0, 1))(params, x)
    loss_tf = jax2tf.convert(_loss)
    variables = {k: tf.Variable(v) for k, v in params.items()}
    x_tf = tf.constant(x)

    def grads():
        with tf.GradientTape() as tape:
            tape.watch(x_tf)
            value, _ = loss_tf(variables, x_tf)
        return tape.gradient(value, (variables, x_tf))
    for run in (grads, tf.function(grads, autograph=False)):
        g_p, g_x = run()
        _close(g_p["w"], ref_p["w"], rtol=1e-5)
        _close(g_p["b"], ref_p["b"], rtol=1e-5)
        _close(g_x, ref_x, rtol=1e-5)


def test_gradients_through_control_flow_and_integer_arguments():
    xs, c0 = _randn(6, 3), _randn(3)

    def f(xs, c0, k):
        c, ys = _scan_cumsum(xs, c0)
        return jnp.sum(ys * k) + _cond_fn(c[0], c).sum()
    k = np.int32(3)
    ref = mjax.grad(f, argnums=(0, 1))(xs, c0, k)
    xs_tf, c0_tf, k_tf = tf.constant(xs), tf.constant(c0), tf.constant(k)
    with tf.GradientTape() as tape:
        tape.watch([xs_tf, c0_tf, k_tf])
        y = jax2tf.convert(f)(xs_tf, c0_tf, k_tf)
    g_xs, g_c0, g_k = tape.gradient(y, [xs_tf, c0_tf, k_tf])
    _close(g_xs, ref[0], rtol=1e-4, atol=1e-5)
    _close(g_c0, ref[1], rtol=1e-4, atol=1e-5)
    assert g_k is None                  # integer inputs get no gradient


def test_unconnected_outputs_and_second_order_gradients():
    f = lambda x: (jnp.sin(x) * x, jnp.cos(x))
    x = _randn(4)
    x_tf = tf.constant(x)
    with tf.GradientTape() as outer:
        outer.watch(x_tf)
        with tf.GradientTape() as inner:
            inner.watch(x_tf)
            y, _unused = jax2tf.convert(f)(x_tf)
            s = tf.reduce_sum(y)
        g = inner.gradient(s, x_tf)
        gs = tf.reduce_sum(g)
    gg = outer.gradient(gs, x_tf)
    first = lambda x: jnp.sum(f(x)[0])
    _close(g, mjax.grad(first)(x), rtol=1e-5)
    _close(gg, mjax.grad(lambda x: jnp.sum(mjax.grad(first)(x)))(x), rtol=1e-5)


def test_with_gradient_false_prevents_gradients():
    x = tf.constant(_randn(3))
    f_tf = jax2tf.convert(jnp.sin, with_gradient=False)
    _close(f_tf(x), jnp.sin(x.numpy()))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f_tf(x)
    with pytest.raises(LookupError, match="does not support gradients"):
        tape.gradient(y, x)


# ---- errors -----------------------------------------------------------------------------
def test_polymorphic_shapes_make_one_module_for_every_size():
    w = _randn(4, 3)

    def f(w, x):
        return jnp.mean(jnp.tanh(x @ w), axis=0), x[:, :2] * 2

    f_tf = tf.function(jax2tf.convert(f, polymorphic_shapes=[None, "(b, 4)"]),
                       autograph=False, input_signature=[tf.TensorSpec((4, 3), tf.float32),
                                                         tf.TensorSpec((None, 4), tf.float32)])
    graph = f_tf.get_concrete_function().graph
    (op,) = [o for o in graph.get_operations() if o.type == "XlaCallModule"]
    assert [tf.TensorShape(s).as_list() for s in op.get_attr("Sout")] == [[3], [None, 2]]
    wv = tf.Variable(w)
    for n in (1, 7, 128):
        x = _randn(n, 4)
        with tf.GradientTape() as tape:
            y, z = f_tf(wv, x)
            loss = tf.reduce_sum(y ** 2) + tf.reduce_sum(z)
        _close(y, f(w, x)[0], rtol=1e-5)
        _close(z, x[:, :2] * 2)
        ref = mjax.grad(lambda w: jnp.sum(f(w, x)[0] ** 2) + jnp.sum(f(w, x)[1]))(w)
        _close(tape.gradient(loss, wv), ref, rtol=1e-4, atol=1e-6)
    # The module's own shape assertions, with JAX's messages.
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Expected value >= 1 for dimension variable 'b'"):
        f_tf(w, np.ones((0, 4), np.float32))
    # Constraints, and a dimension expression.
    g_tf = jax2tf.convert(lambda x, y: x.sum() + y.sum(), polymorphic_shapes=["(b,)", "(2*b,)"],
                          polymorphic_constraints=("b >= 2",))
    _close(g_tf(np.ones(3, np.float32), np.ones(6, np.float32)), np.float32(9))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"args\[1\].shape\[0\] \(= 5\) and the specification '2\*b'"):
        g_tf(np.ones(3, np.float32), np.ones(5, np.float32))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"constraints \['b >= 2'\]"):
        g_tf(np.ones(1, np.float32), np.ones(2, np.float32))


def test_polymorphic_shapes_that_do_not_fit_the_arguments():
    x = _randn(2, 3)
    _close(jax2tf.convert(jnp.sin, polymorphic_shapes=["(2, _)"])(x), jnp.sin(x))
    _close(jax2tf.convert(jnp.sin, polymorphic_shapes="(2, ...)")(x), jnp.sin(x))
    with pytest.raises(ValueError, match="does not match its shape"):
        jax2tf.convert(jnp.sin, polymorphic_shapes=["(4, 3)"])(x)
    with pytest.raises(ValueError, match="must have rank 2"):
        jax2tf.convert(jnp.sin, polymorphic_shapes=["(b,)"])(x)
    unknown = tf.function(jax2tf.convert(jnp.sin), autograph=False,
                          input_signature=[tf.TensorSpec((None, 3), tf.float32)])
    with pytest.raises(NotImplementedError, match=r"args\[0\] has the shape .* give "
                                                  r"polymorphic_shapes"):
        unknown.get_concrete_function()
    with pytest.raises(ValueError, match="sequence of strings"):
        jax2tf.convert(jnp.sin, polymorphic_constraints="b >= 2")


def test_bad_arguments_and_options():
    f_tf = jax2tf.convert(jnp.sin)
    with pytest.raises(TypeError, match=r"args\[0\] has the TF dtype string"):
        f_tf(tf.constant(["a"]))
    with pytest.raises(TypeError, match=r"args\[0\]\['x'\] is .*object"):
        f_tf({"x": object()})
    with pytest.raises(OverflowError, match=r"too large to convert to int32 \(args\[0\]\)"):
        f_tf(2 ** 40)
    with pytest.raises(ValueError, match="native_serialization_platforms"):
        jax2tf.convert(jnp.sin, native_serialization_platforms=("gpu",))
    with pytest.raises(TypeError, match="callable"):
        jax2tf.convert(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(NotImplementedError, match="enable_xla=False"):
            jax2tf.convert(jnp.sin, enable_xla=False)
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    with pytest.raises(ValueError, match="Dtype mismatch|Shape mismatch|Rank mismatch"):
        export.from_stablehlo(_module_bytes(jnp.sin, (3,))).call(np.zeros(4, np.float32))


# ---- back to mjax ------------------------------------------------------------------------
def _module_bytes(f, shape):
    cf = tf.function(jax2tf.convert(f), autograph=False).get_concrete_function(
        tf.TensorSpec(shape, tf.float32))
    (op,) = [o for o in cf.graph.get_operations() if o.type == "XlaCallModule"]
    assert op.get_attr("version") == export.maximum_supported_calling_convention_version
    assert op.get_attr("platforms") == [b"CPU"]
    return op.get_attr("module")


def test_graph_module_runs_back_in_mjax_under_jit_and_in_docs():
    f = lambda x: (jnp.tanh(x) * 3.0, jnp.argmin(x))
    exp = export.from_stablehlo(_module_bytes(f, (5,)), platforms=["cpu"])
    x = _randn(5)
    got = mjax.jit(lambda x: exp.call(x))(x)
    for a, b in zip(got, f(x)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # In the process that converted it, the module's VJP is known: mjax.grad works.
    assert exp.has_vjp()
    loss = lambda g: lambda x: jnp.sum(g(x)[0] ** 2)
    np.testing.assert_allclose(np.asarray(mjax.grad(loss(exp.call))(x)),
                               np.asarray(mjax.grad(loss(f))(x)), rtol=1e-6)
    assert not export.from_stablehlo(exp.mlir_module()).has_vjp()   # text: unknown
    ns = {}
    exec(_doc_block("jax2tf-usage"), ns)
    exec(_doc_block("jax2tf-to-mjax"), ns)
    ref = np.sin(np.ones((2, 3), np.float32)) @ np.ones((3, 4), np.float32)
    np.testing.assert_allclose(ns["out"]["z"].numpy(), ref, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ns["z"]), ref, rtol=1e-6)



def test_round_trip_through_tf2jax_matches_mjax_and_is_differentiable():
    from mjax.experimental import tf2jax

    def f(p, x):
        return jnp.sum(jnp.tanh(x @ p["w"] + p["b"]) ** 2)
    p = {"w": _randn(3, 2), "b": _randn(2)}
    x = _randn(4, 3)
    f_tf = tf.function(jax2tf.convert(f), autograph=False)
    fn, params = tf2jax.convert(f_tf, p, x)
    out, _ = fn(params, p, x)
    _close(np.asarray(out), f(p, x), rtol=1e-6)
    g = mjax.grad(lambda p: fn(params, p, x)[0])(p)
    ref = mjax.grad(f)(p, x)
    for k in p:
        _close(np.asarray(g[k]), ref[k], rtol=1e-5)

# ---- SavedModel -------------------------------------------------------------------------
def cnn(params, x):
    """Two convolutions (NHWC), a max pool and a dense layer."""
    dn = ("NHWC", "HWIO", "NHWC")
    y = lax.conv_general_dilated(x, params["k1"], (1, 1), "SAME", dimension_numbers=dn)
    y = mjax.nn.relu(y + params["b1"])
    y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    y = lax.conv_general_dilated(y, params["k2"], (2, 2), "SAME", dimension_numbers=dn)
    y = jnp.tanh(y + params["b2"])
    return y.reshape(y.shape[0], -1) @ params["w"] + params["b"]


CNN_PARAMS = {"k1": _randn(3, 3, 1, 4) * 0.5, "b1": _randn(4) * 0.1,
              "k2": _randn(3, 3, 4, 8) * 0.3, "b2": _randn(8) * 0.1,
              "w": _randn(32, 5) * 0.2, "b": np.zeros(5, np.float32)}
CNN_XS = [_randn(n, 8, 8, 1) for n in (1, 7, 128)]   # (batches of one saved model)


class CNN(tf.Module):
    def __init__(self, params):
        super().__init__()
        self.params = {k: tf.Variable(v) for k, v in params.items()}
        self._apply = jax2tf.convert(cnn, polymorphic_shapes=[None, "(b, 8, 8, 1)"])

    @tf.function(input_signature=[tf.TensorSpec((None, 8, 8, 1), tf.float32)],
                 autograph=False)
    def __call__(self, x):
        return self._apply(self.params, x)


# Run in a fresh process after docs/tf.md's load block (which defines model, x,
# log_probs and grads): the CNN's outputs and gradients, and whether mjax got imported.
LOAD_CNN = """
import json
np.savez(OUT, mlp_x=x.numpy(), mlp_out=log_probs.numpy(),
         **{f"mlp_grad_{i}": g.numpy() for i, g in enumerate(tf.nest.flatten(grads))})
cnn = tf.saved_model.load(CNN_DIR)
res = {}
for i, xc in enumerate(np.load(CNN_X_FILE).values()):   # (batches 1, 7 and 128)
    xc = tf.constant(xc)
    with tf.GradientTape() as tape:
        tape.watch(xc)
        yc = cnn(xc)
        lc = tf.reduce_sum(tf.sin(yc))
    gp, gx = tape.gradient(lc, (cnn.params, xc))
    res.update({f"out_{i}": yc.numpy(), f"grad_x_{i}": gx.numpy(),
                **{f"grad_{k}_{i}": v.numpy() for k, v in gp.items()}})
np.savez(OUT_CNN, **res)
print(json.dumps({"mjax_imported": "mjax" in sys.modules}))
"""


def _save_and_load_in_fresh_process(tmp):
    """Saves docs/tf.md's MLP (running its save block) and the CNN, then runs the docs'
    load block and LOAD_CNN in a fresh Python; returns the save block's namespace, the
    fresh process's report and its MLP and CNN results."""
    ns = {}
    save = _doc_block("jax2tf-save")
    assert 'export_dir = "/tmp/mjax_classifier"' in save
    exec(save.replace("/tmp/mjax_classifier", str(tmp / "mlp")), ns)
    tf.saved_model.save(CNN(CNN_PARAMS), str(tmp / "cnn"))
    np.savez(tmp / "cnn_x.npz", *CNN_XS)
    load = _doc_block("jax2tf-load").replace("/tmp/mjax_classifier", str(tmp / "mlp"))
    script = (load + f"OUT, OUT_CNN = {str(tmp / 'mlp.npz')!r}, {str(tmp / 'cnn.npz')!r}\n"
              f"CNN_DIR, CNN_X_FILE = {str(tmp / 'cnn')!r}, {str(tmp / 'cnn_x.npz')!r}\n"
              + LOAD_CNN)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    return ns, report, dict(np.load(tmp / "mlp.npz")), dict(np.load(tmp / "cnn.npz"))


# One test: saving and the fresh process cost ~15 s, which pytest-xdist would pay once
# per worker if the checks were split across tests.
def test_saved_mlp_and_cnn_run_without_mjax_and_match_mjax_outputs_and_grads(tmp_path):
    ns, report, mlp_res, cnn_res = _save_and_load_in_fresh_process(tmp_path)
    assert report == {"mjax_imported": False}
    mlp, params, x = ns["mlp"], ns["params"], mlp_res["mlp_x"]
    _close(mlp_res["mlp_out"], mlp(params, x), rtol=1e-5, atol=1e-5)
    # The live module in this process gives the same too.
    _close(ns["model"](tf.constant(x)), mlp(params, x), rtol=1e-5, atol=1e-5)

    # tf.GradientTape in the fresh process against mjax.grad here.
    ref = mjax.grad(lambda p: -jnp.mean(mlp(p, x)[:, 0]))(params)
    leaves = mjax.tree_util.tree_leaves(ref)
    assert len(leaves) == sum(k.startswith("mlp_grad_") for k in mlp_res)
    for i, g in enumerate(leaves):
        _close(mlp_res[f"mlp_grad_{i}"], g, rtol=1e-4, atol=1e-6)
    # One saved CNN, with a symbolic batch, for batches 1, 7 and 128.
    for i, xc in enumerate(CNN_XS):
        _close(cnn_res[f"out_{i}"], cnn(CNN_PARAMS, xc), rtol=1e-5, atol=1e-5)
        ref_p, ref_x = mjax.grad(lambda p, x: jnp.sum(jnp.sin(cnn(p, x))), argnums=(0, 1))(
            CNN_PARAMS, xc)
        for k, g in ref_p.items():
            _close(cnn_res[f"grad_{k}_{i}"], g, rtol=1e-4, atol=1e-5)
        _close(cnn_res[f"grad_x_{i}"], ref_x, rtol=1e-4, atol=1e-5)


def test_other_public_names():
    spec = mjax.ShapeDtypeStruct((2, 3), np.float32)
    out, shapes = jax2tf.eval_polymorphic_shape(lambda x: x.T @ x)(spec)
    assert (out.shape, out.dtype, shapes) == ((3, 3), np.float32, "(3, 3)")
    out, shapes = jax2tf.eval_polymorphic_shape(
        lambda x: jnp.concatenate([x, x]), polymorphic_shapes=[jax2tf.PolyShape("n", 3)])(spec)
    assert (shapes, str(out.shape)) == ("(2*n, 3)", "(2*n, 3)")
    _close(jax2tf.convert(jnp.cos, polymorphic_shapes=[jax2tf.PolyShape(2, "_")])(
        np.ones((2, 3), np.float32)), jnp.cos(np.ones((2, 3), np.float32)))
    with pytest.raises(NotImplementedError, match="tf2jax"):
        jax2tf.call_tf(tf.sin)
    assert jax2tf.DisabledSafetyCheck is export.DisabledSafetyCheck
