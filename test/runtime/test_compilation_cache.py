"""The persistent compilation cache: a second process skips XLA, damaged entries are
misses that get rewritten, and processes filling one cache at once are safe."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mjax.runtime import compilation_cache as cc

ROOT = pathlib.Path(__file__).resolve().parents[2]

# A child process: compiles one program through jit and prints "<compiles> <hits> <sum>".
CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import mjax, mjax.numpy as jnp
    from mjax.runtime import compilation_cache as cc, get_backend
    cc.settings.directory = sys.argv[1]
    cc.settings.min_compile_time_secs = 0.0
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    f = mjax.jit(lambda x: jnp.tanh(x) * scale + jnp.sum(x ** 2))
    y = np.asarray(f(np.arange(16, dtype=np.float32)))
    st = get_backend().stats
    print(st["compiles"], st["cache_hits"], repr(float(y.sum())))
""")


def run_child(cache_dir, *args):
    env = dict(os.environ)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    env.pop("MJAX_COMPILATION_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", CHILD, str(cache_dir), *map(str, args)],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    compiles, hits, total = out.stdout.split()
    return int(compiles), int(hits), float(total)


def expected_total(scale=3.0):
    x = np.arange(16, dtype=np.float32)
    return float((np.tanh(x) * np.float32(scale) + np.sum(x ** 2)).sum())


def entries(d):
    return sorted(p for p in pathlib.Path(d).iterdir() if p.suffix == ".mjaxexe")


def test_second_process_skips_compilation(tmp_path):
    c1, h1, t1 = run_child(tmp_path)
    assert c1 >= 1 and h1 == 0
    assert entries(tmp_path), "first process wrote no cache entry"
    c2, h2, t2 = run_child(tmp_path)
    assert c2 == 0 and h2 == c1, (c2, h2)
    np.testing.assert_allclose([t1, t2], expected_total(), rtol=1e-6)


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_damaged_entry_is_a_miss_and_is_rewritten(tmp_path, damage):
    run_child(tmp_path)
    (entry,) = entries(tmp_path)
    data = entry.read_bytes()
    if damage == "truncate":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        b = bytearray(data)
        b[-10] ^= 0xFF
        entry.write_bytes(bytes(b))
    elif damage == "garbage":
        entry.write_bytes(b"not an executable at all")
    else:
        entry.write_bytes(b"")
    c, h, t = run_child(tmp_path)
    assert (c, h) == (1, 0)
    np.testing.assert_allclose(t, expected_total(), rtol=1e-6)
    assert run_child(tmp_path)[:2] == (0, 1)   # rewritten: the next process hits


def test_concurrent_writers(tmp_path):
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), str(s)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env, cwd=ROOT)
             for s in (3.0, 3.0, 5.0, 5.0)]
    for p, s in zip(procs, (3.0, 3.0, 5.0, 5.0)):
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        np.testing.assert_allclose(float(out.split()[2]), expected_total(s), rtol=1e-6)
    assert len(entries(tmp_path)) == 2           # one per distinct program
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]
    for s in (3.0, 5.0):
        c, h, t = run_child(tmp_path, s)
        assert (c, h) == (0, 1)
        np.testing.assert_allclose(t, expected_total(s), rtol=1e-6)


def test_key_covers_program_and_options():
    base = dict(platform="cpu", platform_version="v", device_kinds=["cpu"], num_devices=1,
                num_partitions=1, options="")
    k = cc.cache_key("prog", **base)
    assert k == cc.cache_key("prog", **base)
    assert k != cc.cache_key("prog2", **base)
    for field, value in (("platform", "cuda"), ("num_partitions", 2), ("options", "x"),
                         ("device_kinds", ["gpu"])):
        assert k != cc.cache_key("prog", **{**base, field: value})


def test_no_directory_means_no_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(cc.settings, "directory", None)
    assert cc.get("abc") is None
    cc.put("abc", b"payload")              # a no-op, not an error
    monkeypatch.setattr(cc.settings, "directory", str(tmp_path))
    monkeypatch.setattr(cc.settings, "min_entry_size_bytes", 0)
    cc.put("abc", b"payload")
    assert cc.get("abc") == b"payload"
