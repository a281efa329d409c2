"""shard_map over hijax values with HiPspecs (JAX's docs/hijax_types.md, "sharding"),
compared with JAX (a test-only oracle): a quantized array split by rows, into and out of
shard_map, under jit and eagerly; plain PartitionSpecs over a hi value; errors."""
from dataclasses import dataclass

import numpy as np
import pytest

from test_hijax_types import LIBS, _defs, _quantized

ROWS = np.arange(24, dtype=np.float32).reshape(8, 3) - 11.5


def _setup(lib):
    api, jnp, hijax = LIBS[lib]
    QArray, QArrayTy, quantize, dequantize = _quantized(lib)

    @dataclass(frozen=True)
    class QArrayP(hijax.HiPspec):
        spec: object

        def to_lo(self):
            return (self.spec, self.spec)

    # (JAX asks the type for its per-device block type and back; mjax does not need
    # these, and the page defines them.)
    def shard(self, mesh, manual_axes, check_vma, spec):
        qvalue_ty, _ = self.lo_ty()
        qspec, _ = spec.to_lo()
        return QArrayTy(qvalue_ty.shard(mesh, manual_axes, check_vma, qspec).shape)

    def unshard(self, mesh, check_vma, spec):
        qvalue_ty, _ = self.lo_ty()
        qspec, _ = spec.to_lo()
        return QArrayTy(qvalue_ty.unshard(mesh, check_vma, qspec).shape)

    QArrayTy.shard, QArrayTy.unshard = shard, unshard
    mesh = api.make_mesh((4,), ("i",), axis_types=(api.sharding.AxisType.Explicit,))
    return api, jnp, QArray, QArrayP, quantize, dequantize, mesh


def _run(lib, use_jit):
    api, jnp, QArray, QArrayP, quantize, dequantize, mesh = _setup(lib)
    P = api.P
    seen = []
    wrap = api.jit if use_jit else (lambda f: f)

    @wrap
    @api.shard_map(mesh=mesh, in_specs=P("i"), out_specs=QArrayP(P("i")))
    def quantize_shards(x):
        seen.append(api.typeof(x).shape)
        return quantize(x)

    @wrap
    @api.shard_map(mesh=mesh, in_specs=QArrayP(P("i")), out_specs=P("i"))
    def dequantize_shards(qx):
        seen.append(api.typeof(qx).shape)
        return dequantize(qx)

    x = api.device_put(jnp.asarray(ROWS), api.NamedSharding(mesh, P("i")))
    q = quantize_shards(x)
    back = dequantize_shards(q)
    return (type(q).__name__, np.asarray(q.qvalue), np.asarray(q.scale),
            q.qvalue.sharding.spec, q.scale.sharding.spec, np.asarray(back),
            sorted(set(seen)))


def test_hipspec_in_and_out_of_shard_map_matches_jax():
    got, want = _run("mjax", True), _run("jax", True)
    assert got[0] == want[0] == "QArray"
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)
    assert (tuple(got[3]), tuple(got[4])) == (tuple(want[3]), tuple(want[4]))
    np.testing.assert_allclose(got[5], want[5], rtol=1e-6)
    assert np.max(np.abs(got[5] - ROWS)) < 0.1            # (a quantization round trip)
    assert got[6] == want[6] == [(2, 3)]                  # (each device sees two rows)


def test_hipspec_shard_map_called_outside_jit():
    # (JAX's eager shard_map asks the hi type for more than this QArrayTy defines: the
    # call outside jit is compared with mjax's own call under jit. Outside jit a result's
    # spec is spelled as its out_spec, P('i'), as JAX spells an array's.)
    got, under_jit = _run("mjax", False), _run("mjax", True)
    for k, (a, b) in enumerate(zip(got, under_jit)):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        elif k in (3, 4):
            assert tuple(a) == ("i",) and tuple(b)[0] == "i" and set(tuple(b)[1:]) <= {None}
        else:
            assert a == b


def test_hi_value_with_a_plain_spec_splits_each_lo_value():
    api, jnp, QArray, QArrayP, quantize, dequantize, mesh = _setup("mjax")
    P = api.P
    q = quantize(jnp.asarray(ROWS))

    @api.jit
    @api.shard_map(mesh=mesh, in_specs=(P("i"), P("i")), out_specs=(P("i"), P("i")))
    def rows_of(qx, y):
        return dequantize(qx) * 2.0, y + 1.0

    d, y = rows_of(q, jnp.ones((8,)))
    want = np.asarray(q.qvalue).astype(np.float32) * np.asarray(q.scale)[:, None] * 2.0
    np.testing.assert_allclose(np.asarray(d), want, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(y), np.full(8, 2.0, np.float32))


def test_hipspec_for_an_array_is_an_error():
    api, jnp, QArray, QArrayP, quantize, dequantize, mesh = _setup("mjax")
    P = api.P
    f = api.shard_map(lambda x: x, mesh=mesh, in_specs=(QArrayP(P("i")),),
                      out_specs=P("i"))
    with pytest.raises(ValueError, match="in_specs"):
        f(jnp.asarray(ROWS))


def test_mutable_hi_value_is_refused():
    # (its state would not be written back: a NotImplementedError naming it)
    Box, get, set_ = _defs("box", "mjax")
    api, jnp, QArray, QArrayP, quantize, dequantize, mesh = _setup("mjax")
    f = api.shard_map(lambda b: get(b) * 2.0, mesh=mesh, in_specs=api.P(),
                      out_specs=api.P())
    with pytest.raises(NotImplementedError, match="mutable hijax"):
        f(Box(jnp.ones(4)))
