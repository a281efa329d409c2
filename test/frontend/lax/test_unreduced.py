"""Arrays unreduced (and reduced) over mesh axes, on the CPU devices of test/conftest.py,
against jax and NumPy: types, each device's partial, the all-reduce of a reshard, the
local contraction of einsum/matmul with an unreduced out_sharding, shard_map's
pcast(to='unreduced'), and the errors for what mjax does not run."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.sharding import P
from mjax.arrays.sharding_types import ShardingTypeError


@pytest.fixture(scope="module")
def meshes():
    return mjax.make_mesh((2,), ("X",)), jax.make_mesh((2,), ("X",))


def shards(x):
    """{device id: partial} of an array's addressable shards. (JAX's Shard.index raises
    NotImplementedError for unreduced arrays.)"""
    return {s.device.id: np.asarray(s.data) for s in x.addressable_shards}


def same_shards(m, j):
    ms, js = shards(m), shards(j)
    assert ms.keys() == js.keys()
    for k in ms:
        np.testing.assert_allclose(ms[k], js[k], rtol=1e-6)


def operands(lib, jnp_):
    a = lib.device_put(jnp_.arange(4.).reshape(2, 2), lib.P(None, "X"))
    b = lib.device_put(jnp_.arange(4., 8.).reshape(2, 2), lib.P("X", None))
    return a, b


def test_einsum_unreduced_partials_and_all_reduce(meshes):
    out = {}
    for lib, jnp_, mesh in ((mjax, jnp, meshes[0]), (jax, jjnp, meshes[1])):
        with lib.set_mesh(mesh):
            a, b = operands(lib, jnp_)
            c = jnp_.einsum("ij,jk->ik", a, b, out_sharding=lib.P(None, None, unreduced={"X"}))
            d = lib.reshard(c, lib.P(None, None))
            out[lib.__name__] = (c, d, str(lib.typeof(c)), str(lib.typeof(d)),
                                 repr(c.sharding))
    (mc, md, *mtexts), (jc, jd, *jtexts) = out["mjax"], out["jax"]
    assert mtexts == jtexts
    assert mtexts[0] == "float32[2,2]{U:X}"
    same_shards(mc, jc)
    # Device k holds a[:, k] (x) b[k, :]: a real partial, not the sum.
    host_a, host_b = np.arange(4.).reshape(2, 2), np.arange(4., 8.).reshape(2, 2)
    for k, part in shards(mc).items():
        np.testing.assert_allclose(part, np.outer(host_a[:, k], host_b[k]))
    np.testing.assert_allclose(np.asarray(md), host_a @ host_b)
    np.testing.assert_allclose(np.asarray(md), np.asarray(jd))
    assert md.sharding.is_fully_replicated and not mc.sharding.is_fully_replicated


def test_matmul_unreduced_keeps_split_free_dims():
    mmesh = mjax.make_mesh((2, 2), ("X", "Y"))
    jmesh = jax.make_mesh((2, 2), ("X", "Y"))
    x = np.arange(32.).reshape(4, 8)
    y = np.arange(16.).reshape(8, 2) / 4
    got = {}
    for lib, jnp_, mesh in ((mjax, jnp, mmesh), (jax, jjnp, jmesh)):
        with lib.set_mesh(mesh):
            a = lib.device_put(x, lib.P("Y", "X"))
            b = lib.device_put(y, lib.P("X", None))
            c = jnp_.matmul(a, b, out_sharding=lib.P("Y", None, unreduced={"X"}))
            got[lib.__name__] = (c, str(lib.typeof(c)), np.asarray(lib.reshard(c, lib.P())))
    assert got["mjax"][1] == got["jax"][1] == "float32[4@Y,2]{U:X}"
    same_shards(got["mjax"][0], got["jax"][0])
    np.testing.assert_allclose(got["mjax"][2], x @ y)


def test_two_unreduced_axes():
    mmesh = mjax.make_mesh((2, 2), ("X", "Y"))
    jmesh = jax.make_mesh((2, 2), ("X", "Y"))
    x, y = np.arange(8.).reshape(2, 4), np.arange(8.).reshape(4, 2) - 3
    got = {}
    for lib, jnp_, mesh in ((mjax, jnp, mmesh), (jax, jjnp, jmesh)):
        with lib.set_mesh(mesh):
            a = lib.device_put(x, lib.P(None, ("X", "Y")))
            b = lib.device_put(y, lib.P(("X", "Y"), None))
            c = jnp_.einsum("ij,jk->ik", a, b,
                            out_sharding=lib.P(None, None, unreduced={"X", "Y"}))
            got[lib.__name__] = (c, str(lib.typeof(c)),
                                 np.asarray(lib.reshard(c, lib.P(None, None))))
    assert got["mjax"][1] == got["jax"][1] == "float32[2,2]{U:(X,Y)}"
    same_shards(got["mjax"][0], got["jax"][0])
    np.testing.assert_allclose(got["mjax"][2], x @ y)


def test_add_of_unreduced_stays_unreduced(meshes):
    with mjax.set_mesh(meshes[0]):
        a, b = operands(mjax, jnp)
        spec = P(None, None, unreduced={"X"})
        c = jnp.einsum("ij,jk->ik", a, b, out_sharding=spec)
        c2 = jnp.einsum("ij,jk->ik", 2. * a, b, out_sharding=spec)
        s = c + c2
        assert str(mjax.typeof(s)) == "float32[2,2]{U:X}"
        for k, part in shards(s).items():
            np.testing.assert_allclose(part, shards(c)[k] + shards(c2)[k])
        total = mjax.reshard(s, P(None, None))
    host = np.arange(4.).reshape(2, 2) @ np.arange(4., 8.).reshape(2, 2)
    np.testing.assert_allclose(np.asarray(total), 3 * host)
    np.testing.assert_allclose(np.asarray(s), 3 * host)   # (its value: the partials' sum)


RULES = {
    "sub": lambda c, w, jnp_: c - c,
    "neg": lambda c, w, jnp_: -c,
    "exp": lambda c, w, jnp_: jnp_.exp(c),
    "mul_reduced": lambda c, w, jnp_: c * w,
    "mul_plain": lambda c, w, jnp_: c * jnp_.ones((2, 2)),
    "add_plain": lambda c, w, jnp_: c + jnp_.ones((2, 2)),
    "sum_axis": lambda c, w, jnp_: jnp_.sum(c, axis=0),
    "sum_all": lambda c, w, jnp_: jnp_.sum(c),
    "transpose": lambda c, w, jnp_: c.T,
    "astype": lambda c, w, jnp_: c.astype(jnp_.float16),
}


@pytest.mark.parametrize("rule", list(RULES))
def test_unreduced_rules_as_jax(meshes, rule):
    """Which ops keep an array unreduced, and which raise (JAX's unreduced rules); the
    values kept are partials whose sum is NumPy's answer."""
    got = {}
    for lib, jnp_, mesh in ((mjax, jnp, meshes[0]), (jax, jjnp, meshes[1])):
        with lib.set_mesh(mesh):
            a, b = operands(lib, jnp_)
            c = jnp_.einsum("ij,jk->ik", a, b, out_sharding=lib.P(None, None, unreduced={"X"}))
            w = lib.reshard(jnp_.full((2, 2), 3.), lib.P(None, None, reduced={"X"}))
            try:
                out = RULES[rule](c, w, jnp_)
            except Exception as e:  # noqa: BLE001
                got[lib.__name__] = type(e).__name__
                continue
            total = np.asarray(lib.reshard(out, lib.P(*[None] * out.ndim)))
            got[lib.__name__] = (str(lib.typeof(out)), repr(out), total)
    m, j = got["mjax"], got["jax"]
    if isinstance(j, str):
        assert m == j
        return
    assert m[:2] == j[:2]
    np.testing.assert_allclose(m[2], j[2], rtol=1e-3)


def test_nonlinear_op_raises_as_jax(meshes):
    msgs = []
    for lib, jnp_, mesh in ((mjax, jnp, meshes[0]), (jax, jjnp, meshes[1])):
        with lib.set_mesh(mesh):
            a, b = operands(lib, jnp_)
            c = jnp_.einsum("ij,jk->ik", a, b, out_sharding=lib.P(None, None, unreduced={"X"}))
            with pytest.raises(NotImplementedError) as e:
                jnp_.cos(c)
            msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_reduced_reshard(meshes):
    w = np.arange(8.).reshape(4, 2) / 10
    x = np.arange(32.).reshape(8, 4)
    texts = []
    for lib, mesh in ((mjax, meshes[0]), (jax, meshes[1])):
        with lib.set_mesh(mesh):
            w_ = lib.reshard(lib.device_put(w, lib.P(None, None)),
                             lib.P(None, None, reduced={"X"}))
            xs = lib.device_put(x, lib.P("X", None))
            y = xs @ w_
            texts.append((str(lib.typeof(w_)), str(lib.typeof(y))))
            np.testing.assert_allclose(np.asarray(w_), w)
            np.testing.assert_allclose(np.asarray(y), x @ w, rtol=1e-6)
    assert texts[0] == texts[1] == ("float32[4,2]{R:X}", "float32[8@X,2]")


def test_device_put_unreduced_splits_the_value():
    mmesh = mjax.make_mesh((4, 2), ("X", "Y"))
    jmesh = jax.make_mesh((4, 2), ("X", "Y"))
    x = np.arange(32.).reshape(8, 4)
    # From the host, or an array split over ('X', 'Y'): the split differs (sharding_201).
    for src in (None, P("X", "Y")):
        mx = x if src is None else mjax.device_put(x, mjax.NamedSharding(mmesh, src))
        jx = x if src is None else jax.device_put(x, jax.NamedSharding(jmesh, jax.P(*src)))
        m = mjax.device_put(mx, mjax.NamedSharding(mmesh, P("X", None, unreduced={"Y"})))
        j = jax.device_put(jx, jax.NamedSharding(jmesh, jax.P("X", None, unreduced={"Y"})))
        assert repr(m.sharding) == repr(j.sharding)
        same_shards(m, j)
        np.testing.assert_allclose(np.asarray(mjax.reshard(m, mjax.NamedSharding(
            mmesh, P("X", None)))), x)
        np.testing.assert_allclose(np.asarray(jax.reshard(j, jax.NamedSharding(
            jmesh, jax.P("X", None)))), x)


def test_shard_map_pcast_unreduced(meshes):
    got = {}
    for lib, jnp_, mesh in ((mjax, jnp, meshes[0]), (jax, jjnp, meshes[1])):
        with lib.set_mesh(mesh):
            a, b = operands(lib, jnp_)

            @lib.shard_map(in_specs=(lib.P(None, "X"), lib.P("X", None)),
                           out_specs=lib.P(None, None, unreduced={"X"}))
            def matmul_partial(a, b):
                return lib.lax.pcast(a @ b, "X", to="unreduced")

            c = matmul_partial(a, b)
            got[lib.__name__] = (c, str(lib.typeof(c)),
                                 np.asarray(lib.reshard(c, lib.P(None, None))))
    assert got["mjax"][1] == got["jax"][1] == "float32[2,2]{U:X}"
    same_shards(got["mjax"][0], got["jax"][0])
    np.testing.assert_allclose(got["mjax"][2], got["jax"][2])


def test_unsupported_raise_not_implemented(meshes):
    with mjax.set_mesh(meshes[0]):
        a, b = operands(mjax, jnp)
        c = jnp.einsum("ij,jk->ik", a, b, out_sharding=P(None, None, unreduced={"X"}))
        # (jit of unreduced arrays: test_unreduced_traced.py)
        with pytest.raises(ShardingTypeError):     # (JAX's: 2. is not reduced)
            c * 2.


def test_partition_spec_and_sharding_equality(meshes):
    mesh = meshes[0]
    plain = mjax.NamedSharding(mesh, P(None, None))
    u = mjax.NamedSharding(mesh, P(None, None, unreduced={"X"}))
    r = mjax.NamedSharding(mesh, P(None, None, reduced={"X"}))
    assert len({plain, u, r}) == 3 and plain != u and u != r
    assert u == mjax.NamedSharding(mesh, P(None, None, unreduced={"X"}))
    assert repr(P("X", unreduced={"Y"})) == repr(jax.P("X", unreduced={"Y"}))
    for lib in (mjax, jax):
        with pytest.raises(ValueError, match="cannot overlap"):
            lib.P("X", unreduced={"X"})
        with pytest.raises(ValueError, match="cannot overlap"):
            lib.P(None, unreduced={"X"}, reduced={"X"})
    with pytest.raises(ValueError):
        mjax.NamedSharding(mesh, P(None, unreduced={"Z"}))


def test_reshard_between_unreduced_axes_raises():
    mesh = mjax.make_mesh((2, 2), ("X", "Y"))
    u = mjax.device_put(np.ones((4, 4)), mjax.NamedSharding(mesh, P(unreduced={"X"})))
    with pytest.raises(NotImplementedError):
        mjax.reshard(u, mjax.NamedSharding(mesh, P(unreduced={"Y"})))
    np.testing.assert_allclose(np.asarray(u), np.ones((4, 4)))


REDUCED_OPS = {
    "mul_scalar": lambda w, x, jnp_: w * 2.,
    "add": lambda w, x, jnp_: w + w,
    "sin": lambda w, x, jnp_: jnp_.sin(w),
    "matmul_sharded": lambda w, x, jnp_: x @ w,
    "sum": lambda w, x, jnp_: jnp_.sum(w),
    "transpose": lambda w, x, jnp_: w.T,
}


@pytest.mark.parametrize("op", list(REDUCED_OPS))
def test_reduced_axes_kept_as_jax(meshes, op):
    """Ops on arrays reduced over X stay reduced (the same replicated buffers), as JAX's
    reduced rules say; with a value split over X they do not."""
    got = {}
    wv, xv = np.arange(4.).reshape(2, 2) + 1, np.ones((4, 2))
    for lib, jnp_, mesh in ((mjax, jnp, meshes[0]), (jax, jjnp, meshes[1])):
        with lib.set_mesh(mesh):
            w = lib.reshard(lib.device_put(wv.astype(np.float32), lib.P()),
                            lib.P(None, None, reduced={"X"}))
            x = lib.device_put(xv.astype(np.float32), lib.P("X", None))
            out = REDUCED_OPS[op](w, x, jnp_)
            got[lib.__name__] = (str(lib.typeof(out)).lstrip("~"), np.asarray(out))
    assert got["mjax"][0] == got["jax"][0]
    np.testing.assert_allclose(got["mjax"][1], got["jax"][1], rtol=1e-6)


@pytest.mark.parametrize("target", [P("X", None), P(None, None, reduced={"X"}), P(None, "X")],
                         ids=str)
def test_reshard_unreduced_to_other_layouts(meshes, target):
    """The all-reduce lands in any layout without unreduced axes (reduce-scatter-like
    targets too), as jax's reshard does."""
    got = {}
    for lib, jnp_, mesh in ((mjax, jnp, meshes[0]), (jax, jjnp, meshes[1])):
        with lib.set_mesh(mesh):
            a, b = operands(lib, jnp_)
            c = jnp_.einsum("ij,jk->ik", a, b, out_sharding=lib.P(None, None, unreduced={"X"}))
            spec = lib.P(*target, reduced=target.reduced)
            out = lib.reshard(c, spec)
            got[lib.__name__] = (str(lib.typeof(out)).lstrip("~"), np.asarray(out),
                                 shards(out))
    host = np.arange(4.).reshape(2, 2) @ np.arange(4., 8.).reshape(2, 2)
    assert got["mjax"][0] == got["jax"][0]
    np.testing.assert_allclose(got["mjax"][1], host)
    for k, v in got["jax"][2].items():
        np.testing.assert_allclose(got["mjax"][2][k], v)
