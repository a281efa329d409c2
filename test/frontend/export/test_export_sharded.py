"""mjax.export of functions sharded over several devices, against real jax.export: the
device count and shardings an Exported keeps, calls on other devices and meshes (eager,
under jit, under grad), serialization both ways, and the errors. Eight CPU devices come
from test/conftest.py (XLA_FLAGS)."""
import re

import jax
import numpy as np
import pytest
from jax import export as jexport

import mjax
from mjax import export as mexport

X = np.arange(8 * 4, dtype=np.float32).reshape(8, 4) / 7.0
W = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)


def _sharding(lib, mesh, *spec):
    return lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec(*spec))


def _abstract(lib, sizes=(4,), names=("a",)):
    return lib.sharding.AbstractMesh(sizes, names)


def _concrete(lib, ids, shape, names):
    devs = np.array([lib.devices()[i] for i in ids]).reshape(shape)
    return lib.sharding.Mesh(devs, names)


def _f(lib):
    return lambda x: lib.numpy.sin(x) * 2.0


def _g(lib):
    return lambda x, w: (lib.numpy.tanh(x @ w), x.sum(0))


# Each case: lib -> (the jitted function, the export arguments, the mesh to ask
# in/out_shardings_jax over).
def _case_1d_abstract(lib):
    m = _abstract(lib)
    spec = lib.ShapeDtypeStruct(X.shape, np.float32, sharding=_sharding(lib, m, "a"))
    return lib.jit(_f(lib)), (spec,), m


def _case_2d_out_shardings(lib):
    m = _abstract(lib, (2, 2), ("a", "b"))
    f = lib.jit(_g(lib), out_shardings=(_sharding(lib, m, None, "b"), None))
    return f, (lib.ShapeDtypeStruct(X.shape, np.float32, sharding=_sharding(lib, m, "a", "b")),
               lib.ShapeDtypeStruct(W.shape, np.float32)), m


def _case_concrete_mesh(lib):
    m = _concrete(lib, range(4), (4,), ("a",))
    spec = lib.ShapeDtypeStruct(X.shape, np.float32, sharding=_sharding(lib, m, "a"))
    return lib.jit(_f(lib)), (spec,), m


def _case_jit_in_shardings(lib):
    m = _concrete(lib, range(8), (4, 2), ("x", "y"))
    f = lib.jit(_g(lib), in_shardings=(_sharding(lib, m, "x"), _sharding(lib, m)))
    return f, (lib.ShapeDtypeStruct(X.shape, np.float32),
               lib.ShapeDtypeStruct(W.shape, np.float32)), m


def _case_sharded_array(lib):
    m = _concrete(lib, range(2, 6), (2, 2), ("p", "q"))
    x = lib.device_put(X, _sharding(lib, m, "q", "p"))
    return lib.jit(_f(lib)), (x,), m


CASES = [_case_1d_abstract, _case_2d_out_shardings, _case_concrete_mesh,
         _case_jit_in_shardings, _case_sharded_array]


def _export_both(case):
    out = []
    for lib, exp_mod in ((mjax, mexport), (jax, jexport)):
        f, args, mesh = case(lib)
        out.append((exp_mod.export(f)(*args), mesh))
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__[6:])
def test_exported_shardings_match_jax(case):
    (mine, my_mesh), (theirs, their_mesh) = _export_both(case)
    assert mine.nr_devices == theirs.nr_devices > 1
    assert mine.in_shardings_hlo == theirs.in_shardings_hlo
    assert mine.out_shardings_hlo == theirs.out_shardings_hlo
    assert repr(mine.in_shardings_jax(my_mesh)) == repr(theirs.in_shardings_jax(their_mesh))
    assert repr(mine.out_shardings_jax(my_mesh)) == \
        repr(theirs.out_shardings_jax(their_mesh))
    am_mine, am_theirs = my_mesh.abstract_mesh, their_mesh.abstract_mesh
    assert repr(mine.in_shardings_jax(am_mine)) == repr(theirs.in_shardings_jax(am_theirs))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__[6:])
def test_module_is_lowered_for_the_mesh(case):
    (mine, _), (theirs, _) = _export_both(case)
    text, jtext = mine.mlir_module(), theirs.mlir_module()
    n = theirs.nr_devices
    assert f"mhlo.num_partitions = {n} : i32" in text
    assert re.search(r"sdy\.mesh @mesh = <\[(.*?)\]>", text).group(1) == \
        re.search(r"sdy\.mesh @mesh = <\[(.*?)\]>", jtext).group(1)
    # The arguments exported with a sharding carry it, as in JAX's module.
    mine_args = re.findall(r"%arg\d+: tensor<[^>]*> \{sdy\.sharding = (#sdy\.sharding<[^>]*>)",
                           text)
    theirs_args = re.findall(r"%arg\d+: tensor<[^>]*> \{sdy\.sharding = "
                             r"(#sdy\.sharding<[^>]*>)", jtext)
    assert set(theirs_args) <= set(mine_args)


def _shards(arr):
    return sorted((s.device.id, tuple((i.start, i.stop) for i in s.index))
                  for s in arr.addressable_shards)


def _call_both(make_call):
    return make_call(mjax, mexport), make_call(jax, jexport)


def _check_same(mine, theirs, want):
    np.testing.assert_allclose(np.asarray(mine), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(theirs), want, rtol=1e-5, atol=1e-5)
    assert _shards(mine) == _shards(theirs)


@pytest.mark.parametrize("ids,shape,names,spec", [
    (range(4), (4,), ("a",), ("a",)),                  # the export's own mesh
    (range(4, 8), (4,), ("x",), ("x",)),               # other devices, other name
    (range(2, 6), (2, 2), ("b", "c"), ("b",)),         # the export page's other_mesh
    (range(7, 3, -1), (4,), ("a",), (None, "a")),      # reversed, laid out otherwise
])
def test_call_on_the_arguments_devices(ids, shape, names, spec):
    def run(lib, exp_mod):
        exp = _case_1d_abstract(lib)
        exp = exp_mod.export(exp[0])(*exp[1])
        mesh = _concrete(lib, ids, shape, names)
        return exp.call(lib.device_put(X, _sharding(lib, mesh, *spec)))
    mine, theirs = _call_both(run)
    _check_same(mine, theirs, np.sin(X) * 2)


def test_call_with_out_shardings_and_unspecified_argument():
    def run(lib, exp_mod):
        f, args, _ = _case_2d_out_shardings(lib)
        exp = exp_mod.export(f)(*args)
        mesh = _concrete(lib, (3, 1, 0, 2), (2, 2), ("a", "b"))
        x = lib.device_put(X, exp.in_shardings_jax(mesh)[0])
        return exp.call(x, W)
    (mine_y, mine_s), (their_y, their_s) = _call_both(run)
    _check_same(mine_y, their_y, np.tanh(X @ W))
    _check_same(mine_s, their_s, X.sum(0))
    assert repr(mine_y.sharding) == repr(their_y.sharding)


def test_call_inside_jit_and_grad():
    def run(lib, exp_mod):
        f, args, _ = _case_1d_abstract(lib)
        exp = exp_mod.export(f)(*args)
        x = lib.device_put(X, _sharding(lib, _concrete(lib, range(4, 8), (4,), ("x",)), "x"))
        return (lib.jit(exp.call)(x),
                lib.jit(lambda v: exp.call(v * 2.0) + 1.0)(x),
                lib.grad(lambda v: exp.call(v).sum())(x),
                lib.jit(lib.grad(lambda v: (exp.call(v) ** 2).sum()))(x))
    mine, theirs = _call_both(run)
    wants = [np.sin(X) * 2, np.sin(2 * X) * 2 + 1, np.cos(X) * 2,
             2 * (np.sin(X) * 2) * np.cos(X) * 2]
    for m, t, want in zip(mine, theirs, wants):
        _check_same(m, t, want)


def test_exported_vjp_is_sharded_as_jax():
    (mine, _), (theirs, _) = _export_both(_case_2d_out_shardings)
    mv, tv = mine.vjp(), theirs.vjp()
    assert mv.nr_devices == tv.nr_devices == 4
    assert repr(mv._in_named_shardings) == repr(tv._in_named_shardings)
    assert repr(mv._out_named_shardings) == repr(tv._out_named_shardings)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__[6:])
def test_serialize_round_trips(case):
    (mine, _), (theirs, _) = _export_both(case)
    for blob in (mine.serialize(vjp_order=1), theirs.serialize(vjp_order=1)):
        for exp_mod in (mexport, jexport):
            back = exp_mod.deserialize(blob)
            assert back.nr_devices == theirs.nr_devices
            assert repr(back._in_named_shardings) == repr(mine._in_named_shardings)
            assert repr(back._out_named_shardings) == repr(mine._out_named_shardings)
            assert back.vjp().nr_devices == theirs.nr_devices


def test_each_reads_and_calls_the_others_export():
    def run(lib, exp_mod, blob):
        exp = exp_mod.deserialize(blob)
        mesh = _concrete(lib, (6, 7, 4, 5), (2, 2), ("u", "v"))
        x = lib.device_put(X, _sharding(lib, mesh, ("u", "v")))
        return exp.call(x), lib.grad(lambda v: exp.call(v).sum())(x)
    (mine, _), (theirs, _) = _export_both(_case_1d_abstract)
    m_of_j = run(mjax, mexport, theirs.serialize(vjp_order=1))
    j_of_m = run(jax, jexport, mine.serialize(vjp_order=1))
    _check_same(m_of_j[0], j_of_m[0], np.sin(X) * 2)
    np.testing.assert_allclose(np.asarray(m_of_j[1]), np.cos(X) * 2, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(j_of_m[1]), np.cos(X) * 2, rtol=1e-5)


def _error(fn):
    with pytest.raises(ValueError) as e:
        fn()
    return str(e.value)


def test_wrong_device_count_raises_jax_error():
    def run(lib, exp_mod):
        f, args, _ = _case_1d_abstract(lib)
        exp = exp_mod.export(f)(*args)
        one = _error(lambda: exp.call(X))
        mesh = _concrete(lib, range(8), (8,), ("a",))
        eight = _error(lambda: exp.call(lib.device_put(X, _sharding(lib, mesh, "a"))))
        return one, eight
    mine, theirs = _call_both(run)
    assert mine == theirs
    assert "exported for 4 devices and is called in a context with 1 devices" in mine[0]


def test_wrong_device_count_inside_jit_raises_jax_error():
    # (inside a jit compiled for one device, or for a mesh of another size)
    def run(lib, exp_mod):
        f, args, _ = _case_1d_abstract(lib)
        exp = exp_mod.export(f)(*args)
        one = _error(lambda: lib.jit(lambda x: exp.call(x) + 1)(X))
        mesh = _concrete(lib, range(2), (2,), ("a",))
        two = _error(lambda: lib.jit(exp.call)(lib.device_put(X, _sharding(lib, mesh, "a"))))
        return one, two
    mine, theirs = _call_both(run)
    assert mine == theirs
    assert "exported for 4 devices and is called in a context with 2 devices" in mine[1]


def test_shardings_jax_over_another_mesh_raises():
    def run(lib, exp_mod):
        f, args, _ = _case_1d_abstract(lib)
        exp = exp_mod.export(f)(*args)
        return _error(lambda: exp.in_shardings_jax(_abstract(lib, (4,), ("b",))))
    mine, theirs = _call_both(run)
    assert mine.startswith("NamedSharding new mesh") and \
        theirs.startswith("NamedSharding new mesh")
    assert "does not match the mesh used for export" in mine


def test_constraint_inside_exports_for_its_mesh():
    def run(lib, exp_mod):
        mesh = _concrete(lib, range(4), (4,), ("a",))
        f = lib.jit(lambda x: lib.lax.with_sharding_constraint(x * 2, _sharding(lib, mesh, "a")))
        exp = exp_mod.export(f)(lib.ShapeDtypeStruct(X.shape, np.float32))
        out = exp.call(lib.device_put(X, _sharding(lib, mesh)))
        return exp.nr_devices, repr(exp.in_shardings_jax(mesh)), out
    mine, theirs = _call_both(run)
    assert mine[:2] == theirs[:2]
    _check_same(mine[2], theirs[2], X * 2)


def test_multi_platform_sharded_export():
    def run(lib, exp_mod):
        spec = lib.ShapeDtypeStruct(X.shape, np.float32,
                                    sharding=_sharding(lib, _abstract(lib), "a"))
        exp = exp_mod.export(lib.jit(lib.numpy.cos), platforms=("cpu", "cuda"))(spec)
        x = lib.device_put(X, _sharding(lib, _concrete(lib, range(4), (4,), ("a",)), "a"))
        return exp.nr_devices, exp.call(x), lib.jit(exp.call)(x)
    mine, theirs = _call_both(run)
    assert mine[0] == theirs[0] == 4
    _check_same(mine[1], theirs[1], np.cos(X))
    _check_same(mine[2], theirs[2], np.cos(X))


def test_pytree_and_keyword_arguments():
    def run(lib, exp_mod):
        am = _abstract(lib)

        def h(d, *, s):
            return {"y": d["a"] * s, "z": d["b"].sum()}
        exp = exp_mod.export(lib.jit(h))(
            {"a": lib.ShapeDtypeStruct(X.shape, np.float32,
                                       sharding=_sharding(lib, am, None, "a")),
             "b": lib.ShapeDtypeStruct((8,), np.float32)},
            s=lib.ShapeDtypeStruct((), np.float32))
        mesh = _concrete(lib, range(4, 8), (4,), ("a",))
        x = lib.device_put(X, exp.in_shardings_jax(mesh)[0])
        out = exp.call({"a": x, "b": np.ones(8, np.float32)}, s=np.float32(3))
        return (repr(exp.in_shardings_jax(mesh)), repr(exp.out_shardings_jax(mesh)),
                out["y"], float(out["z"]))
    mine, theirs = _call_both(run)
    assert mine[:2] == theirs[:2]
    _check_same(mine[2], theirs[2], X * 3)
    assert mine[3] == theirs[3] == 8.0
