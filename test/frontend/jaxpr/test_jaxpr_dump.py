"""jax_dump_ir_modes' jaxpr modes (mjax/jaxpr/dump.py): the files JAX writes for a
compiled jit, with JAX's names, the jaxpr JAX prints, and an equation-count profile
whose counts per primitive and line are JAX's."""
import collections
import gzip
import json
import os

import jax
import jax.numpy as jnp
from jaxlib import _jax

import mjax
import mjax.numpy as mjnp


def _program(np_):
    def g(x):
        return np_.sin(x) * 2

    def dumped_fn(x):
        return g(x) + np_.cos(x).sum()
    return dumped_fn


def _dump(lib, np_, where, modes):
    lib.config.update("jax_dump_ir_to", str(where))
    lib.config.update("jax_dump_ir_modes", modes)
    try:
        x = np_.linspace(0.0, 1.0, 4)       # (made before the jit: only it is dumped)
        lib.jit(_program(np_))(x).block_until_ready()
    finally:
        lib.config.update("jax_dump_ir_to", "")           # (the defaults)
        lib.config.update("jax_dump_ir_modes", "stablehlo")
    return {name.split("_", 2)[2]: where / name for name in os.listdir(where)
            if "dumped_fn" in name}


def _counts(path):
    """{(primitive, innermost line): equations} of a dumped profile."""
    prof = json.loads(_jax.pprof_profile_to_json(gzip.decompress(path.read_bytes())))
    strings = prof["stringTable"]
    line_of = {loc["id"]: int(loc["line"][0]["line"]) for loc in prof["location"]}
    out = collections.Counter()
    for s in prof["sample"]:
        prim = strings[int(s["label"][0]["str"])]
        line = line_of[s["locationId"][0]] if s.get("locationId") else None
        out[(prim, line)] += int(s["value"][0])
    return out


def test_jaxpr_dumps_as_jax(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "j").mkdir()
    mine = _dump(mjax, mjnp, tmp_path / "m", "jaxpr,jaxpr_html,eqn_count_pprof")
    theirs = _dump(jax, jnp, tmp_path / "j", "jaxpr,jaxpr_html,eqn_count_pprof")
    assert sorted(mine) == sorted(theirs) == [
        "dumped_fn.eqn_count_pprof", "dumped_fn.jaxpr.html", "dumped_fn.jaxpr.txt"]
    assert mine["dumped_fn.jaxpr.txt"].read_text() == theirs["dumped_fn.jaxpr.txt"].read_text()
    assert "sin" in mine["dumped_fn.jaxpr.html"].read_text()
    assert _counts(mine["dumped_fn.eqn_count_pprof"]) == _counts(
        theirs["dumped_fn.eqn_count_pprof"])


def test_only_the_modes_asked(tmp_path):
    files = _dump(mjax, mjnp, tmp_path, "eqn_count_pprof")
    assert sorted(files) == ["dumped_fn.eqn_count_pprof"]
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".mlir")]
