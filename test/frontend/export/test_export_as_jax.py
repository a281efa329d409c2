"""What JAX's export page shows, against jax: the @main line of Exported.mlir_module()
(argument names, result paths, public), the weak types of Exported.call's results (kept in
process, dropped by deserialize) and the ValueError of differentiating an Exported
serialized without VJPs."""
import re

import jax
import numpy as np
import pytest
from jax import export as jexport

import mjax
from mjax import export as mexport


def _main_line(lib, ex, fun, *args, **kwargs):
    exp = ex.export(lib.jit(fun))(*args, **kwargs)
    return re.search(r".*@main.*", exp.mlir_module()).group(0).strip()


def mlp(params, x):
    return {"y": params["w"] @ x + params["b"], "h": x}


@pytest.mark.parametrize("fun,args,kwargs", [
    (lambda x: 2 * x * x, (np.float32(1),), {}),
    (mlp, ({"w": np.ones((3, 4), np.float32), "b": np.ones(3, np.float32)},
           np.ones(4, np.float32)), {}),
    (lambda a, b: (a + b, {"k": a}), (np.float32(1),), {"b": np.float32(2)}),
    (lambda *xs: xs[0] * xs[1], (np.float32(1), np.float32(3)), {}),
])
def test_mlir_module_main_line_matches_jax(fun, args, kwargs):
    assert (_main_line(mjax, mexport, fun, *args, **kwargs)
            == _main_line(jax, jexport, fun, *args, **kwargs))


def test_mlir_module_names_the_module_as_jax():
    for lib, ex in ((mjax, mexport), (jax, jexport)):
        text = ex.export(lib.jit(lambda x: x + 1))(np.float32(1)).mlir_module()
        assert "module @jit__lambda attributes {jax.uses_shape_polymorphism = false, " \
               "mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}" in text


def _weak_types(lib, ex):
    exp = ex.export(lib.jit(lib.lax.cos))(1.0)
    back = ex.deserialize(exp.serialize())
    strong = ex.export(lib.jit(lambda x: 2 * x))(lib.ShapeDtypeStruct((), np.float32))
    return [exp.in_avals[0].weak_type, back.in_avals[0].weak_type,
            exp.out_avals[0].weak_type, back.out_avals[0].weak_type,
            exp.call(1.0).weak_type, exp.call(np.float32(1)).weak_type,
            back.call(1.0).weak_type, lib.jit(back.call)(1.0).weak_type,
            strong.call(1.0).weak_type, (3.0 * back.call(1.0)).weak_type] + [
        r.weak_type for r in ex.export(lib.jit(lambda x: (x, np.float32(2) * x)))(1.0)
        .call(1.0)]


def test_call_results_weak_types_as_jax():
    assert _weak_types(mjax, mexport) == _weak_types(jax, jexport)


def test_grad_without_serialized_vjp_raises_jax_value_error():
    for lib, ex in ((mjax, mexport), (jax, jexport)):
        back = ex.deserialize(ex.export(lib.jit(lib.numpy.sin))(1.0).serialize())
        with pytest.raises(ValueError, match="No VJP is available"):
            lib.grad(back.call)(0.1)
        once = ex.deserialize(ex.export(lib.jit(lib.numpy.sin))(1.0).serialize(vjp_order=1))
        np.testing.assert_allclose(lib.grad(once.call)(0.1), np.cos(0.1), rtol=1e-6)


def test_export_for_several_devices_records_the_devices():
    # JAX exports for the mesh's 4 devices (nr_devices == 4), and so does mjax
    # (test_export_sharded.py compares the shardings, calls and serialization).
    spec = jax.sharding.PartitionSpec("a")
    mesh = jax.sharding.AbstractMesh((4,), ("a",))
    arg = jax.ShapeDtypeStruct((32,), np.int32, sharding=jax.sharding.NamedSharding(mesh, spec))
    theirs = jexport.export(jax.jit(lambda x: x.T))(arg)
    mmesh = mjax.sharding.AbstractMesh((4,), ("a",))
    marg = mjax.ShapeDtypeStruct((32,), np.int32,
                                 sharding=mjax.sharding.NamedSharding(mmesh, mjax.P("a")))
    mine = mexport.export(mjax.jit(lambda x: x.T))(marg)
    assert mine.nr_devices == theirs.nr_devices == 4
    assert repr(mine.in_shardings_jax(mmesh)) == repr(theirs.in_shardings_jax(mesh))
