"""Compiled Pallas TPU kernels under shard_map lower per device, as JAX's: the custom
call sits in an `sdy.manual_computation` over the shard_map's mesh axes and takes each
device's blocks (passes/rules/manual.py). Both libraries' modules are lowered for the TPU
on this CPU and compared (manual axes, shardings, the custom call's types, attributes and
Mosaic body); for values, each custom call of mjax's module is replaced by the per-device
kernel in interpret mode and the module compiled through XLA's partitioner for the CPU
devices, against NumPy."""
from __future__ import annotations

import difflib
import functools
import re

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle, from the test extra: missing, the file fails)
import jax.experimental.pallas.tpu  # noqa: E402,F401

import mjax  # noqa: E402
from jaxlib import xla_client as xc  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402
from mjax.dialect.context import context  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402
from mjax.passes.pipeline import partitioning  # noqa: E402
from mjax.runtime import get_backend  # noqa: E402

import test_remote_dma as remote  # noqa: E402
from test_mosaic_differential import decode  # noqa: E402

LIBS = {"jax": (jax, jpl, jpltpu), "mjax": (mjax, pl, pltpu)}


# ---- reading a lowered module -------------------------------------------------------------
def _walk(op, name, out):
    for region in op.regions:
        for block in region.blocks:
            for o in block.operations:
                if o.operation.name == name:
                    out.append(o.operation)
                _walk(o.operation, name, out)
    return out


def _local(sharding: str, global_type) -> tuple:
    """The block shape each device holds of a value of `global_type` laid out as
    `sharding` (`<@mesh, [{"x"}, {}]>`), given the mesh sizes in MESH_SIZES."""
    dims = re.findall(r"\{([^}]*)\}", sharding.split("[", 1)[1])
    shape = list(ir.RankedTensorType(global_type).shape)
    for d, axes in enumerate(dims):
        for a in re.findall(r'"(\w+)"', axes):
            shape[d] //= MESH_SIZES[a]
    return tuple(shape)


MESH_SIZES: dict = {}


def manual_regions(text: str) -> list[dict]:
    """Per sdy.manual_computation of the module: its manual axes, in/out shardings
    (exact and as each device's block shapes), region types, and its tpu custom calls
    (types, attributes and Mosaic body: test_mosaic_differential.decode)."""
    with context(), ir.Location.unknown():
        module = ir.Module.parse(text)      # (held: its ops die with it)
        out = []
        for mc in _walk(module.operation, "sdy.manual_computation", []):
            ins = re.findall(r"<@\w+, \[[^\]]*\]>", str(mc.attributes["in_shardings"]))
            outs = re.findall(r"<@\w+, \[[^\]]*\]>", str(mc.attributes["out_shardings"]))
            block = mc.regions[0].blocks[0]
            ret = list(block.operations)[-1]
            calls = [c for c in _walk(mc, "stablehlo.custom_call", [])
                     if str(c.attributes["call_target_name"]) == '"tpu_custom_call"']
            out.append(dict(
                manual_axes=str(mc.attributes["manual_axes"]),
                in_shardings=[re.sub(r"@\w+", "@m", s) for s in ins],
                out_shardings=[re.sub(r"@\w+", "@m", s) for s in outs],
                in_blocks=[_local(s, v.type) for s, v in zip(ins, mc.operands)],
                out_blocks=[_local(s, r.type) for s, r in zip(outs, mc.results)],
                args=[str(a.type) for a in block.arguments],
                returns=[str(v.type) for v in ret.operands],
                calls=[dict(operands=[str(v.type) for v in c.operands],
                            results=[str(r.type) for r in c.results],
                            decoded=decode(c)) for c in calls]))
        return out


def _lower(lib, f, *args):
    return lib.jit(f).trace(*args).lower(lowering_platforms=("tpu",)).as_text()


def outside_regions(text: str) -> dict:
    """How many reshapes, transposes and sharding constraints the module has outside its
    manual computations (JAX's shard_map gives the region the global values whole)."""
    names = ("stablehlo.reshape", "stablehlo.transpose", "sdy.sharding_constraint")
    counts = dict.fromkeys(names, 0)

    def visit(op):
        for region in op.regions:
            for block in region.blocks:
                for o in block.operations:
                    if o.operation.name in counts:
                        counts[o.operation.name] += 1
                    if o.operation.name != "sdy.manual_computation":
                        visit(o.operation)
    with context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        visit(module.operation)
    return counts


def assert_regions_as_jax(jtext: str, mtext: str) -> list[dict]:
    """mjax's manual regions are JAX's: manual axes, in/out shardings (the dimensions the
    specs split), per-device blocks, region types, custom calls with their attributes
    and Mosaic bodies; and around them no more reshapes, transposes or constraints than
    JAX's module has."""
    want, got = manual_regions(jtext), manual_regions(mtext)
    assert len(got) == len(want) >= 1
    for w, g in zip(want, got):
        for key in ("manual_axes", "in_shardings", "out_shardings", "in_blocks",
                    "out_blocks", "args", "returns"):
            assert g[key] == w[key], (key, g[key], w[key])
        assert len(g["calls"]) == len(w["calls"]) >= 1
        for wc, gc in zip(w["calls"], g["calls"]):
            assert (gc["operands"], gc["results"]) == (wc["operands"], wc["results"])
            (ga, gb), (wa, wb) = gc["decoded"], wc["decoded"]
            assert ga == wa
            assert gb == wb, "".join(difflib.unified_diff(
                wb.splitlines(True), gb.splitlines(True), "jax", "mjax", n=2))
    assert outside_regions(mtext) == outside_regions(jtext)
    return got


# ---- the remote DMA kernels (test_remote_dma.py) ------------------------------------------
@pytest.mark.parametrize("name", sorted(remote.KERNELS))
def test_remote_dma_kernels_run_per_device(name):
    _, mesh_shape, axes, _, _ = remote.KERNELS[name]
    MESH_SIZES.clear()
    MESH_SIZES.update(zip(axes, mesh_shape))
    texts = {}
    for key, lib in (("jax", jax), ("mjax", mjax)):
        f, x = remote._shard_mapped(lib, name)
        texts[key] = _lower(lib, f, x)
    # (all_gather's result is split along its second dim, P(None, "x"))
    assert_regions_as_jax(texts["jax"], texts["mjax"])
    assert "stablehlo.while" not in texts["mjax"]


def test_right_permute_devices_are_the_mesh():
    # The region's devices are the mesh's, in its order: with the kernel replaced by
    # the permute it does (a collective_permute to the right neighbour), the module
    # compiled for 4 CPU devices gives the rolled array.
    f, x = remote._shard_mapped(mjax, "right_permute")
    mesh = x.sharding.mesh
    text = _lower(mjax, f, x)
    pairs = ", ".join(f"[{i}, {(i + 1) % remote.N}]" for i in range(remote.N))

    # (built as text: the op's generic form is the simplest to write)
    new = re.sub(
        r"(%\w+) = stablehlo\.custom_call @tpu_custom_call\((%\w+)\) \{.*?\} : "
        r"\((tensor<[^>]*>)\) -> (tensor<[^>]*>)",
        lambda m: (f'{m[1]} = "stablehlo.collective_permute"({m[2]}) {{channel_handle = '
                   f'#stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs '
                   f'= dense<[{pairs}]> : tensor<{remote.N}x2xi64>}} : ({m[3]}) -> {m[4]}'),
        text)
    assert new != text
    (y,) = _run(new, mesh, [x])
    np.testing.assert_array_equal(y, np.concatenate(np.roll(
        np.split(np.asarray(x), remote.N), 1, axis=0)))


# ---- running a module with its kernels interpreted ---------------------------------------
def _run(text: str, mesh, args) -> list[np.ndarray]:
    """`text` compiled for the mesh's CPU devices through XLA's partitioner and run on
    `args` (mjax arrays laid out as the module's arguments say); every device's shards
    of each result, assembled as the module's result shardings say."""
    backend = get_backend("cpu")
    devices = list(mesh.devices.flat)
    with context():
        module = ir.Module.parse(text)
        part = partitioning(module)
    exe = backend.compile(text, devices, num_partitions=len(devices), partitioning=part)
    results = exe.loaded.execute_sharded([a._buf for a in args])
    out = []
    for shards in results.disassemble_into_single_device_arrays():
        out.append(_assemble(shards, exe, len(out)))
    return out


def _assemble(shards, exe, k):
    """The global value of result k from its per-device shards (XLA's output sharding)."""
    hlo = xc.HloSharding.from_proto(exe.loaded.get_output_shardings()[k])
    pieces = [np.asarray(s) for s in shards]
    if hlo.is_replicated():
        return pieces[0]
    dims = list(hlo.tile_assignment_dimensions())
    devs = list(hlo.tile_assignment_devices())
    rank = pieces[0].ndim
    if len(dims) > rank:          # (a last dim of replicas)
        devs = devs[::dims[rank]]
        dims = dims[:rank]
    grid = np.empty(dims, dtype=object)
    for n, dev in enumerate(devs):   # (device `dev`: the dev-th of the device assignment)
        grid[np.unravel_index(n, dims)] = pieces[dev]
    return np.block(grid.tolist())


def interpreted(text: str, kernels: dict) -> str:
    """`text` with each tpu custom call replaced by a call of the per-device kernel in
    interpret mode (kernels: kernel_name -> the mjax function of the local blocks, with
    interpret=True), lowered by mjax for the CPU."""
    with context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        calls = [c for c in _walk(module.operation, "stablehlo.custom_call", [])
                 if str(c.attributes["call_target_name"]) == '"tpu_custom_call"']
        assert calls
        for k, call in enumerate(calls):
            name = ir.StringAttr(call.attributes["kernel_name"]).value
            avals = [mjax.ShapeDtypeStruct(tuple(v.type.shape), _dtype(v.type))
                     for v in call.operands]
            local = mjax.jit(kernels[name]).trace(*avals).lower().as_text()
            local = re.sub(r"@(\w+)", lambda m: f"@k{k}_{m[1]}", local)
            local = local.replace("func.func public", "func.func private")
            lmod = ir.Module.parse(local)
            for fn in list(lmod.body.operations):
                fn.operation.clone(ip=ir.InsertionPoint(module.body))
            new = ir.Operation.create(
                "func.call", results=[r.type for r in call.results],
                operands=list(call.operands),
                attributes={"callee": ir.FlatSymbolRefAttr.get(f"k{k}_main")},
                ip=ir.InsertionPoint(call))
            for old, r in zip(call.results, new.results):
                old.replace_all_uses_with(r)
            call.erase()
        return module.operation.get_asm(enable_debug_info=False)


def _dtype(t):
    return {"f32": np.float32, "i32": np.int32, "bf16": jax.numpy.bfloat16}[
        str(ir.RankedTensorType(t).element_type)]


# ---- VMEM-blocked kernels ----------------------------------------------------------------
def add_kernel(J, pl, pltpu, block, interpret=False):
    """x + y (+ its block's grid index), over (block) blocks."""
    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...] + pl.program_id(0).astype(np.float32)

    def call(x, y):
        rows = x.shape[0] // block[0]
        return pl.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype), grid=(rows,),
            in_specs=[pl.BlockSpec(block, lambda i: (i, 0))] * 2,
            out_specs=pl.BlockSpec(block, lambda i: (i, 0)),
            interpret=interpret)(x, y)
    return call


def add_reference(x, y, block):
    rows = np.arange(x.shape[0]) // block[0]
    return x + y + rows[:, None].astype(np.float32)


def matmul_kernel(J, pl, pltpu, bm, interpret=False):
    """x @ w over row blocks of x (w whole: replicated under the shard_map)."""
    def kernel(x_ref, w_ref, o_ref):
        o_ref[...] = J.numpy.dot(x_ref[...], w_ref[...],
                                 preferred_element_type=np.float32)

    def call(x, w):
        return pl.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct((x.shape[0], w.shape[1]), np.float32),
            grid=(x.shape[0] // bm,),
            in_specs=[pl.BlockSpec((bm, x.shape[1]), lambda i: (i, 0)),
                      pl.BlockSpec(w.shape, lambda i: (0, 0))],
            out_specs=pl.BlockSpec((bm, w.shape[1]), lambda i: (i, 0)),
            interpret=interpret)(x, w)
    return call


# name -> (mesh shape, axes, in specs, out spec, global shapes, kernel): each spec a tuple
# of PartitionSpec entries (an axis, a tuple of axes, None)
XY = ("x", "y")
CASES = {
    "add_1d": ((4,), ("x",), (("x",), ("x",)), ("x",), [(64, 128), (64, 128)], "add"),
    "add_1d_cols": ((4,), ("x",), ((None, "x"), (None, "x")), (None, "x"),
                    [(16, 512), (16, 512)], "add"),
    "add_2d_both": ((2, 2), XY, ((XY,), (XY,)), (XY,), [(64, 128), (64, 128)], "add"),
    "add_2d_both_yx": ((2, 2), XY, ((("y", "x"),), (("y", "x"),)), (("y", "x"),),
                       [(64, 128), (64, 128)], "add"),
    "add_2d_cols_both": ((2, 2), XY, ((None, XY), (None, XY)), (None, XY),
                         [(16, 512), (16, 512)], "add"),
    "add_2d_cols": ((2, 2), XY, (XY, XY), XY, [(32, 256), (32, 256)], "add"),
    "add_2d_cols_yx": ((2, 2), XY, (("y", "x"), ("y", "x")), ("y", "x"),
                       [(32, 256), (32, 256)], "add"),
    "add_2d_one_axis": ((2, 2), XY, (("x",), ("x",)), ("x",), [(32, 128), (32, 128)], "add"),
    "add_2d_y_cols": ((2, 2), XY, ((None, "y"), (None, "y")), (None, "y"),
                      [(16, 256), (16, 256)], "add"),
    "add_replicated_y": ((4,), ("x",), (("x",), ()), ("x",), [(64, 128), (16, 128)], "add"),
    "add_cols_replicated_y": ((4,), ("x",), ((None, "x"), ()), (None, "x"),
                              [(16, 512), (16, 128)], "add"),
    "add_out_rows": ((4,), ("x",), ((None, "x"), (None, "x")), ("x",),
                     [(16, 512), (16, 512)], "add"),
    "add_out_cols_2d": ((2, 2), XY, ((XY,), (XY,)), ("y", "x"), [(64, 128), (64, 128)],
                        "add"),
    "matmul_1d": ((4,), ("x",), (("x",), ()), ("x",), [(64, 128), (128, 128)], "matmul"),
    "matmul_2d": ((2, 2), XY, ((XY,), ()), (XY,), [(64, 128), (128, 128)], "matmul"),
    "matmul_cols_w": ((4,), ("x",), ((), (None, "x")), (None, "x"),
                      [(16, 128), (128, 512)], "matmul"),
}


def _maker(kind, J, pl, pltpu, interpret=False):
    if kind == "add":
        return add_kernel(J, pl, pltpu, (8, 128), interpret)
    return matmul_kernel(J, pl, pltpu, 8, interpret)


def _case(lib, name, interpret=False):
    mesh_shape, axes, in_specs, out_spec, shapes, kind = CASES[name]
    J, lpl, lpltpu = LIBS[lib]
    P = J.sharding.PartitionSpec
    # (Auto axes: over an Explicit mesh, make_mesh's default, JAX's kernel lowering casts
    # each loaded block to its own shape, a vector.shape_cast mjax does not emit)
    mesh = J.make_mesh(mesh_shape, axes, devices=J.devices()[:int(np.prod(mesh_shape))],
                       axis_types=(J.sharding.AxisType.Auto,) * len(axes))
    f = J.shard_map(_maker(kind, J, lpl, lpltpu, interpret), mesh=mesh,
                    in_specs=tuple(P(*s) for s in in_specs), out_specs=P(*out_spec),
                    check_vma=False)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    args = [J.device_put(x, J.sharding.NamedSharding(mesh, P(*s)))
            for x, s in zip(xs, in_specs)]
    return f, args, xs, mesh


def _entry_axes(spec, d):
    e = spec[d] if d < len(spec) else None
    return () if e is None else (e,) if isinstance(e, str) else tuple(e)


def _block_index(spec, d, coords, sizes):
    """(which block, how many) of dimension d the device at `coords` holds (major first)."""
    k, n = 0, 1
    for a in _entry_axes(spec, d):
        k, n = k * sizes[a] + coords[a], n * sizes[a]
    return k, n


def _per_device(name, xs, local):
    """The shard_map's result in NumPy: `local` on each device's blocks, the results
    assembled as the out_spec says (a device whose coordinate along an axis the out_spec
    does not name is not 0 gives nothing: check_vma=False keeps member 0's)."""
    mesh_shape, axes, in_specs, out_spec, _, _ = CASES[name]
    sizes = dict(zip(axes, mesh_shape))
    out = None
    for idx in np.ndindex(*mesh_shape):
        coords = dict(zip(axes, idx))
        blocks = []
        for x, spec in zip(xs, in_specs):
            sl = []
            for d, n in enumerate(x.shape):
                k, m = _block_index(spec, d, coords, sizes)
                sl.append(slice(k * n // m, (k + 1) * n // m))
            blocks.append(x[tuple(sl)])
        y = local(*blocks)
        named = {a for d in range(y.ndim) for a in _entry_axes(out_spec, d)}
        if any(coords[a] for a in axes if a not in named):
            continue
        if out is None:
            out = np.zeros([n * _block_index(out_spec, d, coords, sizes)[1]
                            for d, n in enumerate(y.shape)], y.dtype)
        at = tuple(slice(_block_index(out_spec, d, coords, sizes)[0] * n,
                         (_block_index(out_spec, d, coords, sizes)[0] + 1) * n)
                   for d, n in enumerate(y.shape))
        out[at] = y
    return out


def _reference(name, xs):
    if CASES[name][-1] == "matmul":
        return _per_device(name, xs, lambda x, w: x @ w)
    # (each device adds its own grid index: its row block's place in its local rows)
    return _per_device(name, xs, lambda x, y: x + y + _grid_rows(x.shape[0], x.shape[0]))


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmem_kernel_lowers_per_device(name):
    mesh_shape, axes, *_ = CASES[name]
    MESH_SIZES.clear()
    MESH_SIZES.update(zip(axes, mesh_shape))
    jf, jargs, _, _ = _case("jax", name)
    mf, margs, xs, mesh = _case("mjax", name)
    jtext, mtext = _lower(jax, jf, *jargs), _lower(mjax, mf, *margs)
    assert_regions_as_jax(jtext, mtext)
    assert "stablehlo.while" not in mtext
    # values: the kernel interpreted on each device's blocks, through XLA's partitioner
    kind = CASES[name][-1]
    kernel = _maker(kind, mjax, pl, pltpu, interpret=True)
    (y,) = _run(interpreted(mtext, {"kernel": kernel}), mesh, margs)
    np.testing.assert_allclose(y, _reference(name, xs), rtol=1e-5, atol=1e-4)


# ---- nested forms: a vmap inside or around the shard_map, scalar prefetch, aliases, grads
def _mesh(J, shape=(4,), axes=("x",)):
    return J.make_mesh(shape, axes, devices=J.devices()[:int(np.prod(shape))],
                       axis_types=(J.sharding.AxisType.Auto,) * len(axes))


def _put(J, mesh, xs, specs):
    P = J.sharding.PartitionSpec
    return [J.device_put(x, J.sharding.NamedSharding(mesh, P(*s))) for x, s in zip(xs, specs)]


def _smap(J, f, mesh, in_specs, out_spec):
    P = J.sharding.PartitionSpec
    return J.shard_map(f, mesh=mesh, in_specs=tuple(P(*s) for s in in_specs),
                       out_specs=P(*out_spec), check_vma=False)


def _grid_rows(n_rows, local_rows):
    return ((np.arange(n_rows) % local_rows) // 8)[:, None].astype(np.float32)


def form_vmap_inside(J, lpl, lpltpu, interpret=False):
    """vmap(kernel) inside the shard_map: its batch a grid axis, in the manual region."""
    mesh = _mesh(J)
    k = J.vmap(add_kernel(J, lpl, lpltpu, (8, 128), interpret))
    xs = [np.random.default_rng(1).standard_normal((8, 16, 128)).astype(np.float32)] * 2
    want = xs[0] + xs[1] + _grid_rows(16, 16)[None]
    return _smap(J, k, mesh, [("x",)] * 2, ("x",)), _put(J, mesh, xs, [("x",)] * 2), \
        mesh, {"kernel": k}, want


def form_vmap_inside_2d_cols(J, lpl, lpltpu, interpret=False):
    """vmap(kernel) inside a shard_map splitting the block's rows over y, columns over x."""
    mesh = _mesh(J, (2, 2), ("x", "y"))
    k = J.vmap(add_kernel(J, lpl, lpltpu, (8, 128), interpret))
    xs = [np.random.default_rng(6).standard_normal((4, 32, 256)).astype(np.float32)
          for _ in range(2)]
    want = xs[0] + xs[1] + _grid_rows(32, 16)[None]
    specs = [(None, "y", "x")] * 2
    return _smap(J, k, mesh, specs, (None, "y", "x")), _put(J, mesh, xs, specs), mesh, \
        {"kernel": k}, want


def form_vmap_around(J, lpl, lpltpu, interpret=False):
    """vmap(shard_map(kernel)): every device runs the kernel batched over the vmap."""
    mesh = _mesh(J)
    k = add_kernel(J, lpl, lpltpu, (8, 128), interpret)
    f = J.vmap(_smap(J, k, mesh, [("x",)] * 2, ("x",)))
    xs = [np.random.default_rng(2).standard_normal((3, 64, 128)).astype(np.float32)] * 2
    want = xs[0] + xs[1] + _grid_rows(64, 16)[None]
    return f, _put(J, mesh, xs, [(None, "x")] * 2), mesh, {"kernel": J.vmap(k)}, want


def form_vmap_around_2d_cols(J, lpl, lpltpu, interpret=False):
    """vmap(shard_map(kernel)) over a 2-D mesh whose specs split rows over y, columns over
    x: the batch dim first, before both."""
    mesh = _mesh(J, (2, 2), ("x", "y"))
    k = add_kernel(J, lpl, lpltpu, (8, 128), interpret)
    f = J.vmap(_smap(J, k, mesh, [("y", "x")] * 2, ("y", "x")))
    xs = [np.random.default_rng(7).standard_normal((3, 32, 256)).astype(np.float32)
          for _ in range(2)]
    want = xs[0] + xs[1] + _grid_rows(32, 16)[None]
    return f, _put(J, mesh, xs, [(None, "y", "x")] * 2), mesh, {"kernel": J.vmap(k)}, want


def prefetch_kernel(J, pl, pltpu, interpret=False):
    """Row blocks of x picked by a scalar-prefetch index vector, doubled."""
    def kernel(idx_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0

    def call(idx, x):
        n = idx.shape[0]
        return pl.pallas_call(
            kernel, out_shape=J.ShapeDtypeStruct((n * 8, 128), x.dtype),
            grid_spec=pltpu.PrefetchScalarGridSpec(
                num_scalar_prefetch=1, grid=(n,),
                in_specs=[pl.BlockSpec((8, 128), lambda i, idx: (idx[i], 0))],
                out_specs=pl.BlockSpec((8, 128), lambda i, idx: (i, 0))),
            interpret=interpret)(idx, x)
    return call


def form_scalar_prefetch(J, lpl, lpltpu, interpret=False):
    """A scalar-prefetch operand replicated over the mesh (in_spec P())."""
    mesh = _mesh(J)
    k = prefetch_kernel(J, lpl, lpltpu, interpret)
    idx = np.array([1, 0, 1], np.int32)
    x = np.random.default_rng(3).standard_normal((64, 128)).astype(np.float32)
    want = np.concatenate([np.concatenate([b[8 * i:8 * i + 8] for i in idx]) * 2
                           for b in np.split(x, 4)])
    return _smap(J, k, mesh, [(), ("x",)], ("x",)), _put(J, mesh, [idx, x], [(), ("x",)]), \
        mesh, {"kernel": k}, want


def form_scalar_prefetch_cols(J, lpl, lpltpu, interpret=False):
    """Scalar prefetch (replicated) with x's columns split over the mesh, and the result's."""
    mesh = _mesh(J)
    k = prefetch_kernel(J, lpl, lpltpu, interpret)
    idx = np.array([1, 0, 1], np.int32)
    x = np.random.default_rng(8).standard_normal((16, 512)).astype(np.float32)
    want = np.concatenate([x[8 * i:8 * i + 8] for i in idx]) * 2
    specs = [(), (None, "x")]
    return _smap(J, k, mesh, specs, (None, "x")), _put(J, mesh, [idx, x], specs), mesh, \
        {"kernel": k}, want


def aliased_kernel(J, pl, pltpu, interpret=False):
    """x + 1 written into x's buffer (input_output_aliases {0: 0})."""
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0

    def call(x):
        return pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype),
                              grid=(x.shape[0] // 8,),
                              in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                              out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
                              input_output_aliases={0: 0}, interpret=interpret)(x)
    return call


def form_aliases(J, lpl, lpltpu, interpret=False):
    mesh = _mesh(J, (2, 2), ("x", "y"))
    k = aliased_kernel(J, lpl, lpltpu, interpret)
    x = np.random.default_rng(4).standard_normal((32, 256)).astype(np.float32)
    return _smap(J, k, mesh, [("x", "y")], ("x", "y")), _put(J, mesh, [x], [("x", "y")]), \
        mesh, {"kernel": k}, x + 1


def _square_vjp(J, pl, pltpu, interpret=False):
    """x * x by a kernel, with a custom_vjp whose backward pass is a second kernel (the
    shape of JAX's flash-attention kernels)."""
    def square(x_ref, o_ref):
        o_ref[...] = x_ref[...] * x_ref[...]

    def times_2x(x_ref, g_ref, o_ref):
        o_ref[...] = 2.0 * x_ref[...] * g_ref[...]

    def call(kernel, *args):
        x = args[0]
        return pl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype),
                              grid=(x.shape[0] // 8,),
                              in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))] * len(args),
                              out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
                              interpret=interpret)(*args)

    @J.custom_vjp
    def f(x):
        return call(square, x)
    f.defvjp(lambda x: (call(square, x), x), lambda x, g: (call(times_2x, x, g),))
    return f, functools.partial(call, square), functools.partial(call, times_2x)


def form_custom_vjp_grad(J, lpl, lpltpu, interpret=False):
    mesh = _mesh(J)
    f, fwd, bwd = _square_vjp(J, lpl, lpltpu, interpret)
    g = _smap(J, f, mesh, [("x",)], ("x",))
    x = np.random.default_rng(5).standard_normal((64, 128)).astype(np.float32)
    return J.grad(lambda x: g(x).sum()), _put(J, mesh, [x], [("x",)]), mesh, \
        {"square": fwd, "times_2x": bwd}, 2 * x


def form_user_constraint(J, lpl, lpltpu, interpret=False):
    """A constraint of the user's, of another layout than the in_spec's, before the
    shard_map: it stays (the region takes its value), as in JAX's module."""
    mesh = _mesh(J)
    k = add_kernel(J, lpl, lpltpu, (8, 128), interpret)
    g = _smap(J, k, mesh, [(None, "x")] * 2, (None, "x"))
    rows = J.sharding.NamedSharding(mesh, J.sharding.PartitionSpec("x"))

    def f(x, y):
        return g(J.lax.with_sharding_constraint(x, rows), y)
    xs = [np.random.default_rng(9).standard_normal((16, 512)).astype(np.float32)
          for _ in range(2)]
    want = xs[0] + xs[1] + _grid_rows(16, 16)
    return f, _put(J, mesh, xs, [(None, "x")] * 2), mesh, {"kernel": k}, want


FORMS = {f.__name__[5:]: f for f in (
    form_vmap_inside, form_vmap_inside_2d_cols, form_vmap_around, form_vmap_around_2d_cols,
    form_scalar_prefetch, form_scalar_prefetch_cols, form_aliases, form_custom_vjp_grad,
    form_user_constraint)}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_nested_forms_lower_per_device(name):
    form = FORMS[name]
    jf, jargs, jmesh, *_ = form(jax, jpl, jpltpu)
    mf, margs, mesh, _, want = form(mjax, pl, pltpu)
    MESH_SIZES.clear()
    MESH_SIZES.update(zip(mesh.axis_names, mesh.axis_sizes))
    mtext = _lower(mjax, mf, *margs)
    assert_regions_as_jax(_lower(jax, jf, *jargs), mtext)
    assert "stablehlo.while" not in mtext
    _, _, _, kernels, _ = form(mjax, pl, pltpu, interpret=True)
    (y,) = _run(interpreted(mtext, kernels), mesh, margs)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-4)


def test_gpu_kernel_lowers_per_device():
    # The same path serves a Pallas GPU kernel (mjax: Triton; JAX 0.10.2's default:
    # Mosaic GPU): its custom call sits in a manual computation as JAX's, on the blocks.
    texts = {}
    for lib in ("jax", "mjax"):
        J, lpl, _ = LIBS[lib]
        mesh = _mesh(J, (2, 2), ("x", "y"))

        def kernel(x_ref, y_ref, o_ref):
            o_ref[...] = x_ref[...] + y_ref[...]

        def call(x, y, J=J, lpl=lpl):
            return lpl.pallas_call(kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype),
                                   grid=(x.shape[0] // 8,),
                                   in_specs=[lpl.BlockSpec((8, 128), lambda i: (i, 0))] * 2,
                                   out_specs=lpl.BlockSpec((8, 128), lambda i: (i, 0)))(x, y)
        f = _smap(J, call, mesh, [(("x", "y"),), ()], (("x", "y"),))
        args = _put(J, mesh, [np.ones((64, 128), np.float32), np.ones((16, 128), np.float32)],
                    [(("x", "y"),), ()])
        texts[lib] = J.jit(f).trace(*args).lower(lowering_platforms=("cuda",)).as_text()
    MESH_SIZES.clear()
    MESH_SIZES.update(x=2, y=2)
    got, want = (_regions_any(texts[k]) for k in ("mjax", "jax"))
    assert got == want and len(got) == 1
    assert "__gpu$xla.gpu.triton" in texts["mjax"] and "stablehlo.while" not in texts["mjax"]


def _regions_any(text: str) -> list[tuple]:
    """Per manual computation: its manual axes, shardings, region types and the operand
    and result types of the custom calls inside (whatever their target)."""
    with context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        out = []
        for mc in _walk(module.operation, "sdy.manual_computation", []):
            block = mc.regions[0].blocks[0]
            calls = _walk(mc, "stablehlo.custom_call", [])
            out.append((str(mc.attributes["manual_axes"]),
                        re.sub(r"@\w+", "@m", str(mc.attributes["in_shardings"])),
                        re.sub(r"@\w+", "@m", str(mc.attributes["out_shardings"])),
                        [str(a.type) for a in block.arguments],
                        [([str(v.type) for v in c.operands], [str(r.type) for r in c.results])
                         for c in calls]))
        return out


@pytest.mark.parametrize("spec", [("x",), (None, "x")])
def test_under_a_loop(spec):
    # A shard_map in a loop body: mjax compiles the program in XLA's own sharding form
    # (a constraint in a region), the region still Shardy's (XLA converts it).
    # (the kernel writes (8, 128) blocks down each device's rows: its block is 128 wide)
    x = np.arange(64 * 128, dtype=np.float32).reshape((64, 128) if spec == ("x",) else
                                                       (16, 512))
    texts = {}
    for lib in ("jax", "mjax"):
        J, lpl, lpltpu = LIBS[lib]
        mesh = _mesh(J)
        f = _smap(J, aliased_kernel(J, lpl, lpltpu), mesh, [spec], spec)
        args = _put(J, mesh, [x], [spec])
        texts[lib] = _lower(J, lambda x: J.lax.fori_loop(0, 3, lambda i, c: f(c), x), *args)
    MESH_SIZES.clear()
    MESH_SIZES.update(x=4)
    assert_regions_as_jax(texts["jax"], texts["mjax"])
    (y,) = _run(interpreted(texts["mjax"], {"kernel": aliased_kernel(mjax, pl, pltpu, True)}),
                mesh, args)
    np.testing.assert_array_equal(y, x + 3)


# ---- a kernel among other ops of the body: its operand or result not the shard_map's ----
def _among_body_ops(J, lpl, lpltpu, which, interpret=False):
    """(shard_map, its arguments, the mesh, the kernels): two kernels on the same operands
    ("two_kernels"), the kernel's operand computed in the body and its result used there
    ("computed"), or its result both returned and used ("two_uses")."""
    mesh = _mesh(J, (2, 2), ("x", "y"))
    k = add_kernel(J, lpl, lpltpu, (8, 128), interpret)
    if which == "two_kernels":      # (two regions reading one operand's global value)
        cols = J.sharding.PartitionSpec(None, "x")
        f = J.shard_map(lambda x, y: (k(x, y), k(y, x)), mesh=mesh, in_specs=(cols, cols),
                        out_specs=(cols, cols), check_vma=False)
        specs, shape = [(None, "x")] * 2, (16, 256)
    elif which == "computed":
        f = _smap(J, lambda x, y: k(x * 2.0, y) + 1.0, mesh, [(None, "x")] * 2, (None, "x"))
        specs, shape = [(None, "x")] * 2, (16, 256)
    else:
        P = J.sharding.PartitionSpec
        def both(x, y):
            r = k(x, y)
            return r, r * 3.0
        f = J.shard_map(both, mesh=mesh,
                        in_specs=(P("y", "x"),) * 2, out_specs=(P("y", "x"),) * 2,
                        check_vma=False)
        specs, shape = [("y", "x")] * 2, (32, 256)
    rng = np.random.default_rng(10)
    xs = [rng.standard_normal(shape).astype(np.float32) for _ in range(2)]
    return f, _put(J, mesh, xs, specs), mesh, {"kernel": k}


@pytest.mark.parametrize("which", ["two_kernels", "computed", "two_uses"])
def test_kernel_among_body_ops_values(which):
    # JAX's region holds the whole body; mjax's only the kernel: where the kernel's operand
    # is not the shard_map's, it enters in the stacked form (its device dims merged into
    # the first), and a result read by other ops stays stacked for them. Values: through
    # XLA's partitioner against JAX's interpret mode.
    mf, margs, mesh, _ = _among_body_ops(mjax, pl, pltpu, which)
    MESH_SIZES.clear()
    MESH_SIZES.update(x=2, y=2)
    mtext = _lower(mjax, mf, *margs)
    regions = manual_regions(mtext)
    assert len(regions) == (2 if which == "two_kernels" else 1)
    assert "stablehlo.while" not in mtext
    _, _, _, kernels = _among_body_ops(mjax, pl, pltpu, which, interpret=True)
    got = _run(interpreted(mtext, kernels), mesh, margs)
    jf, jargs, _, _ = _among_body_ops(jax, jpl, jpltpu, which, interpret=True)
    want = jax.jit(jf)(*jargs)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for y, w in zip(got, want):
        np.testing.assert_allclose(y, np.asarray(w), rtol=1e-5, atol=1e-5)
