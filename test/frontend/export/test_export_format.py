"""Exported.serialize writes JAX's FlatBuffer: real jax deserializes and calls mjax's
exports, and mjax JAX's, static and shape-polymorphic alike, gradients included."""
import jax
import numpy as np
import pytest
from ml_dtypes import bfloat16

import mjax
from mjax import export

RNG = np.random.default_rng(0)


def _mlp(lib, params, x):
    for w, b in params:
        x = lib.numpy.tanh(x @ w + b)
    return {"mean": lib.numpy.mean(x, axis=0), "rows": [x.sum(1)]}


def _cnn(lib, params, x):
    w1, wd = params
    y = lib.nn.relu(lib.lax.conv_general_dilated(x, w1, (1, 1), "SAME",
                                                 dimension_numbers=("NHWC", "HWIO", "NHWC")))
    y = lib.lax.reduce_window(y, -np.inf, lib.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return lib.nn.log_softmax(y.reshape((y.shape[0], -1)) @ wd)


MLP = ([(RNG.normal(size=(4, 8)).astype(np.float32), RNG.normal(size=8).astype(np.float32))],
       lambda n: RNG.normal(size=(n, 4)).astype(np.float32), _mlp)
CNN = ([RNG.normal(size=(3, 3, 1, 4)).astype(np.float32) * 0.3,
        RNG.normal(size=(4 * 4 * 4, 10)).astype(np.float32) * 0.3],
       lambda n: RNG.normal(size=(n, 8, 8, 1)).astype(np.float32), _cnn)


def _close(a, b, tol=1e-5):
    la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
    assert len(la) == len(lb)
    for u, v in zip(la, lb):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=tol, atol=tol)


def _loss(lib, call):
    return lambda p, x: lib.numpy.sum(jax.tree.leaves(call(p, x))[0] ** 2)


@pytest.mark.parametrize("model", [MLP, CNN], ids=["mlp", "cnn"])
def test_mjax_exports_run_in_jax_for_every_batch(model):
    params, batch, fun = model
    (b,) = export.symbolic_shape("b")
    spec = mjax.ShapeDtypeStruct((b,) + batch(1).shape[1:], np.float32)
    blob = export.export(mjax.jit(lambda p, x: fun(mjax, p, x)))(params, spec).serialize(
        vjp_order=1)
    restored = jax.export.deserialize(blob)
    assert str(restored.in_avals[-1]).startswith("float32[b,")
    for n in (1, 7, 128):
        x = batch(n)
        _close(restored.call(params, x), fun(jax, params, x), 1e-4)
        _close(jax.grad(_loss(jax, restored.call))(params, x),
               jax.grad(_loss(jax, lambda p, x: fun(jax, p, x)))(params, x), 1e-4)


@pytest.mark.parametrize("model", [MLP, CNN], ids=["mlp", "cnn"])
def test_jax_exports_run_in_mjax_for_every_batch(model):
    params, batch, fun = model
    (b,) = jax.export.symbolic_shape("b")
    spec = jax.ShapeDtypeStruct((b,) + batch(1).shape[1:], np.float32)
    blob = jax.export.export(jax.jit(lambda p, x: fun(jax, p, x)))(params, spec).serialize(
        vjp_order=1)
    restored = export.deserialize(blob)
    assert str(restored.in_avals[-1]).startswith("float32[b,")
    for n in (1, 7, 128):
        x = batch(n)
        _close(restored.call(params, x), fun(jax, params, x), 1e-4)
        _close(mjax.jit(restored.call)(params, x), fun(jax, params, x), 1e-4)
        _close(mjax.grad(_loss(mjax, restored.call))(params, x),
               jax.grad(_loss(jax, lambda p, x: fun(jax, p, x)))(params, x), 1e-4)


def test_static_exports_of_trees_and_dtypes_read_alike_both_ways():
    def f(d, xs, flag):
        return {"sum": d["a"] + d["b"].astype(np.float32), "pair": (xs[0] * 2, xs[1])}, flag
    args = ({"a": np.ones(3, np.float32), "b": np.arange(3, dtype=np.int32)},
            [np.ones((2,), bfloat16), np.zeros((), np.int8)], np.array(True))
    for src, dst in ((mjax, jax), (jax, mjax)):
        exp = src.export.export(src.jit(f))(*args)
        restored = dst.export.deserialize(exp.serialize())
        assert str(restored.in_tree) == str(exp.in_tree)
        assert str(restored.out_tree) == str(exp.out_tree)
        assert [str(a) for a in restored.in_avals] == [str(a) for a in exp.in_avals]
        assert [str(a) for a in restored.out_avals] == [str(a) for a in exp.out_avals]
        assert tuple(restored.platforms) == tuple(exp.platforms)
        assert restored.fun_name == exp.fun_name
        _close(restored.call(*args), f(*args))


def test_constraints_travel_in_the_module():
    (b,) = export.symbolic_shape("b", constraints=["b >= 4"])
    exp = export.export(mjax.jit(lambda x: x * 2))(mjax.ShapeDtypeStruct((b,), np.float32))
    restored = export.deserialize(exp.serialize())
    assert restored.in_avals[0].shape[0] >= 4      # (decided by the restored constraint)
    with pytest.raises(ValueError, match="out of the range"):
        restored.call(np.ones(3, np.float32))
    # JAX reads the same bytes; the module's own assertion refuses b = 3 there.
    restored_jax = jax.export.deserialize(exp.serialize())
    np.testing.assert_array_equal(restored_jax.call(np.ones(5, np.float32)), 2 * np.ones(5))
    with pytest.raises(ValueError, match="refining shapes"):
        restored_jax.call(np.ones(3, np.float32))


def test_registered_namedtuples_and_custom_nodes_serialize_both_ways():
    import collections
    Point = collections.namedtuple("Point", ["x", "y"])

    class Box:
        def __init__(self, value, label):
            self.value, self.label = value, label

    mjax.tree_util.register_pytree_node(Box, lambda b: ((b.value,), b.label),
                                        lambda label, c: Box(c[0], label))
    jax.tree_util.register_pytree_node(Box, lambda b: ((b.value,), b.label),
                                       lambda label, c: Box(c[0], label))
    for lib in (mjax, jax):
        lib.export.register_namedtuple_serialization(Point, serialized_name="test.Point")
        lib.export.register_pytree_node_serialization(
            Box, serialized_name="test.Box", serialize_auxdata=lambda s: s.encode(),
            deserialize_auxdata=lambda b: b.decode())
    with pytest.raises(ValueError, match="Duplicate serialization registration"):
        export.register_namedtuple_serialization(Point, serialized_name="test.Point2")

    def f(p, box):
        return Point(p.y, p.x + box.value), Box(box.value * 2, box.label)
    args = (Point(np.float32(1), np.float32(2)), Box(np.ones(2, np.float32), "tag"))
    for src, dst in ((mjax, jax), (jax, mjax)):
        blob = src.export.export(src.jit(f))(*args).serialize()
        restored = dst.export.deserialize(blob)
        out_point, out_box = restored.call(*args)
        assert type(out_point) is Point and type(out_box) is Box and out_box.label == "tag"
        _close((out_point, out_box.value), ((2.0, 2.0), np.full(2, 2.0)))
    Other = collections.namedtuple("Other", ["a"])
    with pytest.raises(ValueError, match="unregistered type"):
        export.export(mjax.jit(lambda o: o))(Other(np.float32(1))).serialize()


def _cnn_padded_pool(lib, params, x):
    (w1,) = params
    y = lib.lax.conv_general_dilated(x, w1, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = lib.lax.reduce_window(y, -np.inf, lib.lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    return y.reshape((y.shape[0], -1)).sum(1)


PADDED_POOL = ([RNG.normal(size=(3, 3, 1, 4)).astype(np.float32)], CNN[1], _cnn_padded_pool)
_KEY_OPS = ("convolution", "dot_general", "reduce_window", "select_and_scatter", "pad",
            "slice", "reduce")


def _key_ops(text):
    import collections
    import re
    counts = collections.Counter(re.findall(r"\bstablehlo\.([a-z_]+)\b", text))
    scatter_pads = re.findall(r'"stablehlo\.select_and_scatter".*?padding = (dense<[^>]*>)',
                              text)
    return {op: counts[op] for op in _KEY_OPS}, scatter_pads


@pytest.mark.parametrize("model", [PADDED_POOL, CNN, MLP], ids=["padded_pool", "cnn", "mlp"])
def test_shape_polymorphic_exports_for_a_tpu_lower_as_jax(model):
    """Exported for a TPU from any host with a symbolic batch, as on the chip (mjax's default
    platform there): the TPU's select_and_scatter_add form (the op pads; no pad and slice
    around it) once compared the padded sizes, the batch 'b' among them, and raised
    InconclusiveDimensionOperation ('b' > '8') exporting the pooling gradient (the vjp).
    Both libraries export, with the same key ops and select_and_scatter padding, primal
    and vjp, and JAX reads mjax's module back as a TPU one with a symbolic batch."""
    params, batch, fun = model
    exported = {}
    for lib in (mjax, jax):
        (b,) = lib.export.symbolic_shape("b")
        spec = lib.ShapeDtypeStruct((b,) + batch(1).shape[1:], np.float32)
        exported[lib] = lib.export.export(lib.jit(lambda p, x, lib=lib: fun(lib, p, x)),
                                          platforms=["tpu"])(params, spec)
    mine, theirs = exported[mjax], exported[jax]
    assert tuple(mine.platforms) == ("tpu",)
    assert _key_ops(mine.mlir_module()) == _key_ops(theirs.mlir_module())
    assert _key_ops(mine.vjp().mlir_module()) == _key_ops(theirs.vjp().mlir_module())
    restored = jax.export.deserialize(mine.serialize(vjp_order=1))
    assert tuple(restored.platforms) == ("tpu",)
    assert str(restored.in_avals[-1]).startswith("float32[b,")
    x_index = len(jax.tree.leaves(params))
    assert str(restored.vjp().in_avals[x_index]).startswith("float32[b,")
