"""fuser.get_fusion_values / pull_block_spec / push_block_spec against JAX's (the same
fusion built with jax and with mjax: the values found, the BlockSpecs' shapes and index
maps at grid points, and the kernel function's value on blocks), and against NumPy (a
block computed by the kernel function is that block of the whole fusion's value).
Cases in the style of JAX's tests/pallas/fuser_block_spec_test.py."""
import numpy as np
import pytest

import jax  # noqa: F401  (the oracle; fuser_programs imports it per case)
from fuser_programs import namespace

RNG = np.random.RandomState(0)
X3 = RNG.randn(4, 64, 256).astype(np.float32)
X2 = RNG.randn(64, 256).astype(np.float32)
B2 = RNG.randn(64, 256).astype(np.float32)
ROW = RNG.randn(1, 256).astype(np.float32)
X4 = RNG.randn(3, 4, 64, 256).astype(np.float32)
V1 = RNG.randn(256).astype(np.float32)


def _dim(d):
    name = type(d).__name__
    if d is None or name == "Squeezed":
        return None
    return getattr(d, "block_size", d) if name != "Element" else ("E", d.block_size)


def _shape(spec):
    return None if spec.block_shape is None else tuple(_dim(d) for d in spec.block_shape)


def _block(x, spec, idx):
    out = np.asarray(x)
    sl = []
    for d, i, n in zip(spec.block_shape, idx, out.shape):
        b = _dim(d)
        sl.append(int(i) if b is None else slice(int(i) * b, (int(i) + 1) * b))
    return out[tuple(sl)]


# Each case: (fusion, args as ShapeDtypeStructs, out BlockSpec, grid_len, grid points,
# whole-argument values for the args) built from a namespace.
def _case(name, ns):
    jax, jnp, lax, pl = ns.jax, ns.jnp, ns.lax, ns.pl
    f32 = jax.ShapeDtypeStruct((64, 256), jnp.float32)
    spec2 = pl.BlockSpec((16, 128), lambda i, j, k, *_: (i, j))
    pts = [(0, 0, 0), (3, 1, 2), (1, 0, 1)]
    if name == "identity":
        return (lambda x: x), (f32,), spec2, 3, pts, (X2,)
    if name == "const":
        return (lambda: X2), (), spec2, 3, pts, ()
    if name == "exp":
        return jnp.exp, (f32,), spec2, 3, pts, (X2,)
    if name == "tanh_bias":
        return (lambda x: jnp.tanh(x) + B2), (f32,), spec2, 3, pts, (X2,)
    if name in ("add", "mul", "max", "lt", "sub", "div"):
        op = getattr(lax, name)
        return op, (f32, f32), spec2, 3, pts, (X2, B2)
    if name == "bcast_row":
        row = jax.ShapeDtypeStruct((1, 256), jnp.float32)
        return lax.add, (f32, row), pl.BlockSpec((None, 128), lambda i, j: (i, j)), 2, \
            [(0, 0), (5, 1)], (X2, ROW)
    if name == "slice":
        return (lambda: lax.slice(X3, (1, 0, 0), (2, 64, 256))), (), \
            pl.BlockSpec((1, 16, 128), lambda i, j, k: (0, i, j)), 3, pts, ()
    if name == "squeeze":
        return (lambda: jnp.squeeze(X3[1:2], axis=0)), (), spec2, 3, pts, ()
    if name == "dynamic_slice":
        i, j = jnp.array(1, jnp.int32), jnp.array(2, jnp.int32)
        return (lambda: lax.dynamic_slice(X4, (i, j, 0, 0), (1, 1, 64, 256))), (), \
            pl.BlockSpec((1, 1, 16, 128), lambda a, b, c, *_: (0, 0, a, b)), 3, pts, ()
    if name == "dynamic_slice_squeeze":
        i, j = jnp.array(2, jnp.int32), jnp.array(3, jnp.int32)
        return (lambda: jnp.squeeze(lax.dynamic_slice(X4, (i, j, 0, 0), (1, 1, 64, 256)),
                                    axis=(0, 1))), (), spec2, 3, pts, ()
    if name == "dynamic_slice_offset":
        i = jnp.array(1, jnp.int32)
        return (lambda: lax.dynamic_slice(X2, (i * 16, 0), (32, 256))), (), spec2, 3, \
            [(0, 0, 0), (1, 1, 0)], ()
    if name == "transpose":
        return (lambda: lax.transpose(X2, (1, 0))), (), \
            pl.BlockSpec((128, 16), lambda i, j, k: (j, i)), 3, pts, ()
    if name == "transpose_major":
        return (lambda: lax.transpose(X4, (1, 0, 2, 3))), (), \
            pl.BlockSpec((None, None, 16, 128), lambda i, j, k, l: (i, j, k, l)), 4, \
            [(0, 1, 2, 1), (3, 2, 1, 0)], ()
    if name == "convert":
        return (lambda x: x.astype(jnp.bfloat16)), (f32,), spec2, 3, pts, (X2,)
    if name == "bcast_1d":
        return (lambda x: x * jnp.expand_dims(V1, 0)), (f32,), spec2, 3, pts, (X2,)
    if name == "broadcast_to":
        v = ROW
        return (lambda: jnp.broadcast_to(v, (64, 256))), (), spec2, 3, pts, ()
    if name == "full_scalar_prefetch":
        a = jnp.array(1.25, jnp.float32)
        return (lambda: jnp.full((2, 64, 256), a, jnp.float32)), (), \
            pl.BlockSpec((None, 16, 128), lambda i, j, k, *_: (k, i, j)), 3, \
            [(0, 0, 0), (3, 1, 1)], ()
    if name == "dot_general":
        lhs = jax.ShapeDtypeStruct((64, 32), jnp.float32)
        rhs = jax.ShapeDtypeStruct((32, 256), jnp.float32)
        return (lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())))), \
            (lhs, rhs), spec2, 3, pts, (X2[:, :32], B2[:32])
    if name == "reduce_sum":
        return (lambda: X2.sum(axis=1)), (), pl.BlockSpec((16,), lambda i: (i,)), 1, \
            [(0,), (2,)], ()
    if name == "concatenate":     # (each block within one operand)
        return (lambda x: jnp.concatenate([x, X2[:, :128]], axis=1)), \
            (jax.ShapeDtypeStruct((64, 128), jnp.float32),), \
            pl.BlockSpec((16, 128), lambda i, j, k: (i, j)), 3, [(0, 0, 0), (3, 1, 0)], \
            (B2[:, :128],)
    if name == "concatenate_whole":   # (a block spanning the concatenated dimension)
        return (lambda: jnp.concatenate([X2[:, :128], B2[:, :64]], axis=1)), (), \
            pl.BlockSpec((16, 192), lambda i, j, k: (i, 0)), 3, [(0, 0, 0), (3, 0, 1)], ()
    if name == "iota":
        return (lambda: lax.broadcasted_iota(jnp.int32, (2, 64, 256), 2)), (), \
            pl.BlockSpec((None, 16, 128), lambda i, j, k: (k, i, j)), 3, \
            [(0, 0, 0), (2, 1, 1)], ()
    if name == "index_traced":    # (x[i]: a dynamic slice whose start is prefetched)
        i = jnp.array(1)
        return (lambda: jnp.asarray(X3)[i]), (), spec2, 3, pts, ()
    if name == "tile":
        return (lambda: jnp.tile(X2[:32, :128], (2, 2))), (), spec2, 3, pts, ()
    if name == "tile_whole":      # (blocks larger than the tiled operand)
        return (lambda: jnp.tile(X2[:8, :64], (8, 4))), (), spec2, 3, pts, ()
    if name == "tile_squeezed":
        return (lambda: jnp.tile(X3[:1, :16], (4, 4, 2))), (), \
            pl.BlockSpec((pl.Squeezed(), 16, 128), lambda i, j, k: (i, j, k)), 3, \
            [(0, 0, 0), (3, 2, 1)], ()
    if name == "bitcast":
        return (lambda x: lax.bitcast_convert_type(x, jnp.int32)), (f32,), spec2, 3, pts, \
            (X2,)
    if name == "stack":     # (the block holds the whole stacked axis)
        return (lambda x: jnp.stack([x, B2, x * 2], axis=1)), (f32,), \
            pl.BlockSpec((16, 3, 128), lambda i, j, k: (i, 0, j)), 3, pts, (X2,)
    if name == "stack_squeezed":
        return (lambda x: jnp.stack([jnp.exp(x)], axis=0)), (f32,), \
            pl.BlockSpec((None, 16, 128), lambda i, j, k: (0, i, j)), 3, pts, (X2,)
    if name == "unstack":
        return (lambda: jnp.unstack(X3, axis=0)[2] + 1.0), (), spec2, 3, pts, ()
    if name == "unstack_minor":   # (a block squeezing a dim before the unstacked axis)
        return (lambda: jnp.unstack(X3, axis=1)[5]), (), \
            pl.BlockSpec((None, 128), lambda i, j, k: (i, j)), 3, \
            [(0, 0, 0), (3, 1, 2)], ()
    if name == "relu":      # (a custom_jvp_call equation)
        return jax.nn.relu, (f32,), spec2, 3, pts, (X2,)
    if name == "where":     # (a broadcast scalar constant: a scalar-prefetch operand)
        return (lambda x: jnp.where(x > 0, x, 1.0)), (f32,), spec2, 3, pts, (X2,)
    if name == "clip":
        return (lambda x: jnp.clip(x, 0, 1)), (f32,), spec2, 3, pts, (X2,)
    if name == "jit":       # (a nested jit equation)
        return jax.jit(lambda x: jnp.sin(x) * 2), (f32,), spec2, 3, pts, (X2,)
    raise KeyError(name)


CASES = ["identity", "const", "exp", "tanh_bias", "add", "mul", "max", "lt", "sub", "div",
         "bcast_row", "slice", "squeeze", "dynamic_slice", "dynamic_slice_squeeze",
         "dynamic_slice_offset", "transpose", "transpose_major", "convert", "bcast_1d",
         "broadcast_to", "full_scalar_prefetch", "dot_general", "reduce_sum", "relu",
         "where", "clip", "jit", "concatenate", "concatenate_whole", "iota",
         "index_traced", "tile", "tile_whole", "tile_squeezed", "bitcast",
         "stack", "unstack"]


def _pull(lib, name, run_kernel=True):
    ns = namespace(lib)
    fusion, types, spec, grid_len, points, whole = _case(name, ns)
    fuser = ns.fuser
    f2, values, sps = fuser.get_fusion_values(fusion, *types)
    kfn, (value_specs, *arg_specs), _ = fuser.pull_block_spec(
        f2, spec, grid_len=grid_len,
        scalar_prefetch_handler=fuser.make_scalar_prefetch_handler())(values, *types)
    sps1 = ns.jax.tree.map(lambda v: v[None], sps)
    specs = list(value_specs) + list(arg_specs)
    out = {"values": [np.shape(v) for v in values], "sps": [np.shape(v) for v in sps],
           "shapes": [_shape(s) for s in specs], "points": []}
    full = np.asarray(fusion(*whole))
    for p in points:
        idxs = [tuple(int(np.asarray(i)) for i in s.index_map(*p, *sps1)) for s in specs]
        if not run_kernel:
            out["points"].append((idxs, None))
            continue
        blocks_v = tuple(_block(v, s, i) for v, s, i in zip(values, value_specs, idxs))
        blocks_a = [_block(a, s, i) for a, s, i in
                    zip(whole, arg_specs, idxs[len(values):])]
        got = np.asarray(kfn(p, sps1, blocks_v, *blocks_a))
        want = _block(full, spec, spec.index_map(*p, *sps1))
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                                   rtol=1e-5, atol=1e-5)
        out["points"].append((idxs, got))
    return out


@pytest.mark.parametrize("name", CASES)
def test_pull_block_spec_matches_jax(name):
    want, got = _pull("jax", name), _pull("mjax", name)
    assert got["values"] == want["values"]
    assert got["sps"] == want["sps"]
    assert got["shapes"] == want["shapes"]
    for (gi, gv), (wi, wv) in zip(got["points"], want["points"]):
        assert gi == wi
        assert gv.dtype == wv.dtype
        np.testing.assert_allclose(gv.astype(np.float32), wv.astype(np.float32),
                                   rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["stack_squeezed", "unstack_minor"])
def test_stack_blocks_with_squeezed_dims(name):
    # (JAX 0.10.2's kernel evaluation stacks or unstacks along the whole array's axis,
    # not the block's: a squeezed stacked axis keeps a size-1 dim, a squeezed dim before
    # the unstacked axis unstacks the wrong one. mjax's kernel gives NumPy's block (_pull
    # checks it); the BlockSpecs are JAX's)
    got, want = _pull("mjax", name), _pull("jax", name, run_kernel=False)
    assert (got["values"], got["shapes"]) == (want["values"], want["shapes"])
    assert [i for i, _ in got["points"]] == [i for i, _ in want["points"]]
    with pytest.raises((AssertionError, ValueError)):
        _pull("jax", name)


def _push_case(name, ns):
    jax, jnp, lax, pl = ns.jax, ns.jnp, ns.lax, ns.pl
    f32 = jax.ShapeDtypeStruct((64, 256), jnp.float32)
    spec = pl.BlockSpec((16, 128), lambda i, j, k: (i, j))
    if name == "elementwise":
        return (lambda x: jnp.tanh(x * 2.0).astype(jnp.bfloat16)), (spec,), (f32,), 3
    if name == "binop":
        return (lambda x: x + B2), (spec,), (f32,), 3
    if name == "relu":
        return jax.nn.relu, (spec,), (f32,), 3
    if name == "transpose":
        return (lambda x: x.T), (spec,), (f32,), 3
    if name == "reduce_sum":
        full = pl.BlockSpec((16, 256), lambda i, j, k: (i, 0))
        return (lambda x: x.sum(axis=1)), (full,), (f32,), 3
    if name == "broadcast_in_dim":
        row = jax.ShapeDtypeStruct((1, 256), jnp.float32)
        rspec = pl.BlockSpec((1, 128), lambda i, j, k: (0, j))
        return (lambda x: lax.broadcast_in_dim(x, (4, 64, 256), (0, 2))), (rspec,), \
            (row,), 3
    if name == "reshape":     # (lanes to sublanes)
        wide = jax.ShapeDtypeStruct((64, 1024), jnp.float32)
        return (lambda x: x.reshape(64, 8, 128)), \
            (pl.BlockSpec((16, 512), lambda i, j, k: (i, j)),), (wide,), 3
    if name == "concatenate":
        a = jax.ShapeDtypeStruct((64, 128), jnp.float32)
        full = pl.BlockSpec((16, 128), lambda i, j, k: (i, 0))
        return (lambda x, y: jnp.concatenate([x, y], axis=1)), (full, full), (a, a), 3
    if name == "stack":
        return (lambda x, y: jnp.stack([x, y], axis=1)), (spec, spec), (f32, f32), 3
    if name == "unstack":
        x3 = jax.ShapeDtypeStruct((4, 64, 256), jnp.float32)
        s3 = pl.BlockSpec((16, 4, 128), lambda i, j, k: (i, 0, j))
        return (lambda x: jnp.unstack(x, axis=1)[1]), (s3,), \
            (jax.ShapeDtypeStruct((64, 4, 256), jnp.float32),), 3
    raise KeyError(name)


@pytest.mark.parametrize("name", ["elementwise", "binop", "transpose", "reduce_sum",
                                  "broadcast_in_dim", "relu", "reshape", "concatenate",
                                  "stack", "unstack"])
def test_push_block_spec_matches_jax(name):
    def run(lib):
        ns = namespace(lib)
        f, specs, types, grid_len = _push_case(name, ns)
        out = ns.fuser.push_block_spec(f, *specs)(*types)
        return (_shape(out), [tuple(int(np.asarray(i)) for i in out.index_map(*p))
                              for p in [(0, 0, 0), (2, 1, 3)]])
    assert run("mjax") == run("jax")


def test_unsupported_primitive_is_named():
    ns = namespace("mjax")
    jnp, fuser = ns.jnp, ns.fuser
    f2, values, sps = fuser.get_fusion_values(lambda: jnp.sort(X2, axis=0))
    spec = ns.pl.BlockSpec((16, 128), lambda i, j: (i, j))
    with pytest.raises(NotImplementedError, match="sort"):
        fuser.pull_block_spec(f2, spec, grid_len=2)(values)
    with pytest.raises(NotImplementedError, match="cumsum|cumulative"):
        fuser.push_block_spec(lambda x: jnp.cumsum(x, axis=0), spec)(X2)


def test_dag_fusion_is_jax_error():
    # (one value read in two blocks: JAX's ValueError, in mjax too)
    for lib in ("jax", "mjax"):
        ns = namespace(lib)
        t = ns.jax.ShapeDtypeStruct((64, 256), ns.jnp.float32)
        f2, values, _ = ns.fuser.get_fusion_values(
            lambda x: x[:, :128] + x[:, 128:], t)
        spec = ns.pl.BlockSpec((16, 128), lambda i, j: (i, j))
        with pytest.raises(ValueError, match="DAG"):
            ns.fuser.pull_block_spec(f2, spec, grid_len=2)(values, t)


def test_jit_closing_over_an_array():
    # (JAX's fuser refuses a nested jit with constants; mjax's jit takes closed-over
    # arrays as operands, so the array is a value blocked like the output: NumPy's)
    def build(ns):
        t = ns.jax.ShapeDtypeStruct((64, 256), ns.jnp.float32)
        f = ns.jax.jit(lambda x: ns.jnp.sin(x) * B2)
        f2, values, _ = ns.fuser.get_fusion_values(f, t)
        spec = ns.pl.BlockSpec((16, 128), lambda i, j: (i, j))
        return f2, values, spec, t
    ns = namespace("jax")
    f2, values, spec, t = build(ns)
    with pytest.raises(NotImplementedError, match="consts"):
        ns.fuser.pull_block_spec(f2, spec, grid_len=2)(values, t)
    ns = namespace("mjax")
    f2, values, spec, t = build(ns)
    kfn, (vspecs, xspec), _ = ns.fuser.pull_block_spec(f2, spec, grid_len=2)(values, t)
    assert [tuple(s.block_shape) for s in vspecs] == [(16, 128)]
    blocks = tuple(np.asarray(v)[16:32, 128:] for v in values)
    np.testing.assert_allclose(np.asarray(kfn((1, 1), (), blocks, X2[16:32, 128:])),
                               np.sin(X2[16:32, 128:]) * B2[16:32, 128:], rtol=1e-6)


RESHAPES = [((8, 8, 128), (1, 2, 128)), ((2, 32, 128), (2, 4, 128)),
            ((2, 4, 1024), (2, 1, 128)), ((2, 4, 1024), (2, None, 128)),
            ((64, 128), (4, 128)), ((2, 4096), (1, 64)), ((8, 1024), (1, 256)),
            ((64, 128, 1), (4, 128, 1))]


def _reshape(lib, shape, block):
    ns = namespace(lib)
    jax, jnp, pl, fuser = ns.jax, ns.jnp, ns.pl, ns.fuser
    t = jax.ShapeDtypeStruct((2, 4, 8, 128), jnp.float32)
    f2, values, sps = fuser.get_fusion_values(lambda x: x.reshape(shape), t)
    kfn, (_, xs), _ = fuser.pull_block_spec(
        f2, pl.BlockSpec(block, lambda *p: p), grid_len=len(shape),
        scalar_prefetch_handler=fuser.make_scalar_prefetch_handler())(values, t)
    in_block = [_dim(b) for b in xs.block_shape if b is not None]
    x = np.arange(np.prod(in_block), dtype=np.float32).reshape(in_block)
    out = np.asarray(kfn((0, 1, 2), sps, (), x))
    np.testing.assert_array_equal(out, x.reshape([b for b in block if b is not None]))
    pids = (2, 3, 5)[:len(shape)]
    return _shape(xs), tuple(int(np.asarray(i)) for i in xs.index_map(*pids)), out


@pytest.mark.parametrize("shape,block", RESHAPES)
def test_reshape_pull_matches_jax(shape, block):
    got, want = _reshape("mjax", shape, block), _reshape("jax", shape, block)
    assert got[:2] == want[:2]
    np.testing.assert_array_equal(got[2], want[2])


@pytest.mark.parametrize("lib", ["jax", "mjax"])
def test_reshape_lanes_to_sublanes(lib):
    ns = namespace(lib)
    jax, jnp, pl, fuser = ns.jax, ns.jnp, ns.pl, ns.fuser
    t = jax.ShapeDtypeStruct((512, 4096), jnp.float32)
    f2, values, sps = fuser.get_fusion_values(lambda x: x.reshape((512, 32, 128)), t)
    kfn, (_, xs), _ = fuser.pull_block_spec(
        f2, pl.BlockSpec((256, 8, 128), lambda i, j, k: (i, k, 0)), grid_len=3)(values, t)
    assert tuple(xs.block_shape) == (256, 1024)
    assert tuple(int(i) for i in xs.index_map(3, 2, 1)) == (3, 1)
    x = np.arange(256 * 1024, dtype=np.float32).reshape(256, 1024)
    np.testing.assert_array_equal(np.asarray(kfn((0, 1, 2), sps, (), x)),
                                  x.reshape(256, 8, 128))
    with pytest.raises(NotImplementedError):
        fuser.pull_block_spec(f2, pl.BlockSpec((256, 4, 256), lambda i, j, k: (i, j, k)),
                              grid_len=3)(values, t)


def _axis_index_fusion(lib):
    ns = namespace(lib)
    jax, jnp, lax, pl, fuser = ns.jax, ns.jnp, ns.lax, ns.pl, ns.fuser
    P = jax.sharding.PartitionSpec

    def body(x):
        t = jax.ShapeDtypeStruct(x.shape, x.dtype)
        f2, vals, _ = fuser.get_fusion_values(
            lambda v: v * 2 + lax.axis_index("i").astype(jnp.float32), t)
        kfn, _, _ = fuser.pull_block_spec(
            f2, pl.BlockSpec((16, 128), lambda i, j: (i, j)), grid_len=2)(vals, t)
        return kfn((1, 1), (), vals, x[16:32, 128:])
    mesh = jax.make_mesh((1,), ("i",))
    return np.asarray(jax.shard_map(body, mesh=mesh, in_specs=P(),
                                    out_specs=P("i"))(X2))


def test_axis_index_in_a_fusion():
    # (axis_index is evaluated in the kernel function, as JAX's eval rule; JAX 0.10.2's
    # fuser then stops at the pvary its shard_map stages, which mjax's has not)
    with pytest.raises(NotImplementedError, match="pvary"):
        _axis_index_fusion("jax")
    np.testing.assert_array_equal(_axis_index_fusion("mjax"), X2[16:32, 128:] * 2)
