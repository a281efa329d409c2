"""pltpu's descriptions of TPU chips (ChipVersion, TpuInfo, get_tpu_info_for_chip,
get_tpu_info) against JAX 0.10.2's as the oracle: every chip and core count, the derived
properties and methods, the device-kind mapping, and get_tpu_info on this machine's
device (a CPU raises JAX's ValueError; on a TPU both describe the chip) and on TPU devices
described by an abstract mesh or a stand-in device."""
import ast
import dataclasses
import inspect
import textwrap
import types
import warnings

import jax
import numpy as np
import pytest
from jax._src.pallas.mosaic import tpu_info as jtpu_info
from jax.experimental.pallas import tpu as jpltpu

import mjax
from mjax.experimental.pallas import tpu as pltpu
from mjax.experimental.pallas import tpu_info

CHIPS = [c.name for c in jpltpu.ChipVersion]
CORE_COUNTS = (0, 1, 2, 3, 4)
DTYPES = ("float32", "float64", "bfloat16", "float16", "int32", "int8", "uint8", "int4",
          "uint4", "int2", "uint2", "bool", "float8_e5m2", "float8_e4m3fn",
          "float8_e4m3b11fnuz", "int16")


def jax_device_kinds() -> list[str]:
    """The device kinds JAX's chip_version_from_device_kind names in its match cases,
    read from its source."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(
        jtpu_info.chip_version_from_device_kind)))
    kinds = [n.value.value for n in ast.walk(tree)
             if isinstance(n, ast.MatchValue) and isinstance(n.value, ast.Constant)]
    assert len(kinds) >= 10, kinds   # (the parse found the cases)
    return kinds


def outcome(f, *args):
    """("ok", value) or (exception class name, message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", f(*args)
    except Exception as e:   # noqa: BLE001 (compared with JAX's)
        return type(e).__name__, str(e)


def plain(info) -> dict:
    """A TpuInfo's fields, field by field in order, the chip as (name, value) and the
    SparseCore description as a dict."""
    out = {}
    for f in dataclasses.fields(info):
        v = getattr(info, f.name)
        if f.name == "chip_version":
            v = (v.name, v.value)
        elif v is not None and f.name == "sparse_core":
            v = dataclasses.asdict(v)
        out[f.name] = v
    return out


def derived(info) -> dict:
    """Everything TpuInfo computes from its fields."""
    out = {p: outcome(getattr, info, p) for p in ("is_lite", "is_split_chip", "is_megacore")}
    for a in DTYPES:
        out[f"sublane_tiling[{a}]"] = outcome(info.get_sublane_tiling, np.dtype(a))
        for b in DTYPES:
            out[f"matmul[{a},{b}]"] = outcome(info.is_matmul_supported, np.dtype(a),
                                              np.dtype(b))
    out["matmul[str]"] = outcome(info.is_matmul_supported, "bfloat16", "int8")
    return out


def same_outcome(mine, theirs):
    assert mine[0] == theirs[0], (mine, theirs)
    if mine[0] == "ok":
        assert plain(mine[1]) == plain(theirs[1])
        assert derived(mine[1]) == derived(theirs[1])
    else:
        assert mine[1] == theirs[1]


def test_chip_versions_are_jaxs():
    assert [(c.name, c.value) for c in pltpu.ChipVersion] == [
        (c.name, c.value) for c in jpltpu.ChipVersion]
    for c in jpltpu.ChipVersion:
        ours = pltpu.ChipVersion[c.name]
        assert str(ours) == str(c)
        for p in ("num_physical_tensor_cores_per_chip", "supports_megacore", "is_lite"):
            assert getattr(ours, p) == getattr(c, p), (c, p)


def test_tpu_info_fields_are_jaxs():
    assert ([(f.name, f.default, f.kw_only) for f in dataclasses.fields(pltpu.TpuInfo)]
            == [(f.name, f.default, f.kw_only) for f in dataclasses.fields(jpltpu.TpuInfo)])
    assert (inspect.signature(pltpu.get_tpu_info_for_chip).parameters.keys()
            == inspect.signature(jpltpu.get_tpu_info_for_chip).parameters.keys())
    with pytest.raises(dataclasses.FrozenInstanceError):
        pltpu.get_tpu_info_for_chip(pltpu.ChipVersion.TPU_V5E, 1).generation = 4


@pytest.mark.parametrize("chip", CHIPS)
def test_get_tpu_info_for_chip_matches_jax(chip):
    accepted = 0
    for n in CORE_COUNTS:
        mine = outcome(pltpu.get_tpu_info_for_chip, pltpu.ChipVersion[chip], n)
        theirs = outcome(jpltpu.get_tpu_info_for_chip, jpltpu.ChipVersion[chip], n)
        same_outcome(mine, theirs)
        accepted += theirs[0] == "ok"
    assert accepted >= 1   # (every chip has a configuration JAX describes)
    # keyword argument, JAX's name
    same_outcome(outcome(lambda: pltpu.get_tpu_info_for_chip(
                     pltpu.ChipVersion[chip], num_tensor_cores_per_logical_device=1)),
                 outcome(lambda: jpltpu.get_tpu_info_for_chip(
                     jpltpu.ChipVersion[chip], num_tensor_cores_per_logical_device=1)))


def test_device_kind_mapping_matches_jax():
    kinds = jax_device_kinds() + ["cpu", "gpu", "NVIDIA H100 80GB HBM3", "TPU v5 Lite",
                                  "tpu v4", "TPU v7", "TPU v5litepod", "", "TPU v6"]
    for kind in kinds:
        theirs = jtpu_info.chip_version_from_device_kind(kind)
        mine = tpu_info.chip_version_from_device_kind(kind)
        assert (mine and mine.name) == (theirs and theirs.name), kind
    # the v5e the project's TPU runs report
    assert tpu_info.chip_version_from_device_kind("TPU v5 lite") is pltpu.ChipVersion.TPU_V5E


def test_get_tpu_info_on_this_device_matches_jax():
    # (a CPU: JAX's ValueError naming the device kind; a TPU: both describe its chip)
    same_outcome(outcome(pltpu.get_tpu_info), outcome(jpltpu.get_tpu_info))
    assert pltpu.is_tpu_device() == jpltpu.is_tpu_device()
    # under a mesh of the first device (its abstract device tells the kind and cores)
    jmesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",))
    mmesh = mjax.sharding.Mesh(np.array(mjax.devices()[:1]), ("x",))
    with jax.set_mesh(jmesh):
        theirs = outcome(jpltpu.get_tpu_info)
    with mjax.set_mesh(mmesh):
        same_outcome(outcome(pltpu.get_tpu_info), theirs)
    if jax.devices()[0].platform == "cpu":
        with pytest.raises(ValueError, match="Unsupported TPU device kind: cpu"):
            pltpu.get_tpu_info()


@pytest.mark.parametrize("cores", [1, 2, None])
def test_get_tpu_info_of_an_abstract_mesh_device_matches_jax(cores):
    for kind in jax_device_kinds() + ["cpu", "TPU v9"]:
        jmesh = jax.sharding.AbstractMesh((1,), ("x",), abstract_device=(
            jax.sharding.AbstractDevice(device_kind=kind, num_cores=cores, platform="x")))
        mmesh = mjax.sharding.AbstractMesh((1,), ("x",), abstract_device=(
            mjax.sharding.AbstractDevice(device_kind=kind, num_cores=cores, platform="x")))
        with jax.sharding.use_abstract_mesh(jmesh):
            theirs = outcome(jpltpu.get_tpu_info)
            their_tpu = jpltpu.is_tpu_device()
        with mjax.sharding.use_abstract_mesh(mmesh):
            mine = outcome(pltpu.get_tpu_info)
            my_tpu = pltpu.is_tpu_device()
        same_outcome(mine, theirs)
        assert my_tpu == their_tpu, kind


@pytest.mark.parametrize("kind,cores", [("TPU v5 lite", 1), ("TPU v4", 2), ("TPU v4", 1),
                                        ("TPU7x", 1), ("TPU v6 lite", 1)])
def test_get_tpu_info_reads_the_default_device(monkeypatch, kind, cores):
    # (no TPU here: a stand-in default device of the kind a TPU runtime reports; JAX,
    # the oracle, is told the same device through its abstract mesh)
    device = types.SimpleNamespace(device_kind=kind, num_cores=cores, platform="tpu")
    monkeypatch.setattr(tpu_info, "_default_device", lambda: device)
    jmesh = jax.sharding.AbstractMesh((1,), ("x",), abstract_device=(
        jax.sharding.AbstractDevice(device_kind=kind, num_cores=cores, platform="tpu")))
    with jax.sharding.use_abstract_mesh(jmesh):
        theirs = outcome(jpltpu.get_tpu_info)
    same_outcome(outcome(pltpu.get_tpu_info), theirs)
    assert theirs[0] == "ok" and pltpu.is_tpu_device()


def test_registry_describes_other_device_kinds():
    kind = jax.devices()[0].device_kind
    if jtpu_info.chip_version_from_device_kind(kind) is not None:
        pytest.skip("TPU: the registry is consulted only for device kinds that are no "
                    "TPU chip JAX knows")
    tpu_info.registry[kind] = lambda: pltpu.get_tpu_info_for_chip(pltpu.ChipVersion.TPU_V5E,
                                                                  1)
    jtpu_info.registry[kind] = lambda: jpltpu.get_tpu_info_for_chip(
        jpltpu.ChipVersion.TPU_V5E, 1)
    try:
        mine, theirs = outcome(pltpu.get_tpu_info), outcome(jpltpu.get_tpu_info)
        assert mine[0] == "ok"
        same_outcome(mine, theirs)
    finally:
        del tpu_info.registry[kind], jtpu_info.registry[kind]
        jtpu_info.get_tpu_info.cache_clear()
