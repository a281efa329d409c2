"""jax.ShapeDtypeStruct's manual_axis_type and is_ref fields, its update, and
jax.sharding.ManualAxisType, against JAX's; and a pallas_call's out_shape under a
shard_map with check_vma, which must say its varying axes (JAX's ValueError)."""
from __future__ import annotations

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle)
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402

import mjax  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402

LIBS = [(jax, jpl), (mjax, pl)]


def _mat(lib, **kw):
    return lib.sharding.ManualAxisType(**kw)


def test_fields_repr_eq_and_update_as_jax():
    out = []
    for lib, _ in LIBS:
        s = lib.ShapeDtypeStruct((2, 3), np.float32, manual_axis_type=_mat(lib, varying={"x"}))
        r = lib.ShapeDtypeStruct((2,), np.int32, is_ref=True)
        plain = lib.ShapeDtypeStruct((2, 3), np.float32)
        out.append((repr(s), repr(r), repr(plain), s.manual_axis_type.varying, r.is_ref,
                    plain.manual_axis_type, plain.is_ref, s == plain, s == s.update(),
                    repr(s.update(shape=(4,), is_ref=True)),
                    repr(s.update(manual_axis_type=None))))
    assert out[0] == out[1]


def test_manual_axis_type_errors_and_update_as_jax():
    for kw in (dict(varying={"x"}, unreduced={"x"}), dict(varying={"x", "y"}, reduced={"y"})):
        with pytest.raises(ValueError) as want:
            jax.sharding.ManualAxisType(**kw)
        with pytest.raises(ValueError) as got:
            mjax.sharding.ManualAxisType(**kw)
        assert str(got.value) == str(want.value)
    assert repr(mjax.sharding.ManualAxisType(varying={"x"}).update(reduced={"y"})) == repr(
        jax.sharding.ManualAxisType(varying={"x"}).update(reduced={"y"}))


def test_manual_axis_type_must_be_one():
    msgs = []
    for lib, _ in LIBS:
        with pytest.raises(TypeError) as e:
            lib.ShapeDtypeStruct((2,), np.float32, manual_axis_type=("x",))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_is_ref_struct_traces_a_ref_as_jax():
    texts = [str(lib.jit(lambda r: r[...] + 1).trace(
        lib.ShapeDtypeStruct((2,), np.float32, is_ref=True)).jaxpr) for lib, _ in LIBS]
    assert texts[0] == texts[1]


def _shard_mapped(lib, lpl, mat: bool, check_vma: bool):
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]
    kw = dict(manual_axis_type=_mat(lib, varying={"x"})) if mat else {}
    # (TPU interpret mode: JAX's generic interpreter, interpret=True, refuses a varying
    # out_shape under check_vma, its grid loop's carry typed invariant)
    call = lpl.pallas_call(kernel, out_shape=lib.ShapeDtypeStruct((8, 128), np.float32, **kw),
                           interpret=(jpltpu if lib is jax else pltpu).InterpretParams())
    P = lib.sharding.PartitionSpec
    mesh = lib.make_mesh((4,), ("x",), devices=lib.devices()[:4])
    f = lib.shard_map(call, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                      check_vma=check_vma)
    x = np.arange(32 * 128, dtype=np.float32).reshape(32, 128)
    return lib.jit(f), lib.device_put(x, lib.sharding.NamedSharding(mesh, P("x"))), x


@pytest.mark.parametrize("mat,check_vma", [(False, False), (True, True), (True, False)])
def test_pallas_call_in_shard_map_runs(mat, check_vma):
    for lib, lpl in LIBS:
        f, xs, x = _shard_mapped(lib, lpl, mat, check_vma)
        np.testing.assert_array_equal(np.asarray(f(xs)), x)


def test_pallas_call_out_shape_without_manual_axis_type_under_check_vma_is_jax_error():
    msgs = []
    for lib, lpl in LIBS:
        f, xs, _ = _shard_mapped(lib, lpl, False, True)
        with pytest.raises(ValueError) as e:
            f(xs)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert "`manual_axis_type` on `jax.ShapeDtypeStruct` must not be `None`" in msgs[1]
