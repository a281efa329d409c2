"""The persistent compilation cache: a second process skips compilation, and an entry is
trusted only if it proves what it is. Truncated, zeroed, half-written, renamed (another
program's), forged (another executable under the right header), foreign-platform and
old-format entries are misses that get replaced, never a wrong result or a traceback;
processes filling one cache at once and a writer killed mid-write leave it sound.
Every result is checked against NumPy."""
from __future__ import annotations

import hashlib
import importlib.util
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from mjax.runtime import compilation_cache as cc
from mjax.runtime.iree import IreeBackend, module_signature
from mjax.runtime.xla import XlaBackend, executable_signature

ROOT = pathlib.Path(__file__).resolve().parents[2]
ON_TPU = os.environ.get("MJAX_TEST_TPU", "") not in ("", "0")


def needs_iree() -> None:
    """Skips on the TPU machine, where iree (a test dependency) is not installed; elsewhere
    a missing iree fails the test, as a missing dependency should."""
    if ON_TPU and importlib.util.find_spec("iree") is None:
        pytest.skip("TPU: needs iree, a test dependency not installed on the TPU machine")


def _iree_backend() -> IreeBackend:
    needs_iree()
    return IreeBackend("cpu")


BACKENDS = {"xla": lambda: XlaBackend("cpu"), "iree": _iree_backend}


def program(scale: float, n: int = 16) -> str:
    """y = tanh(x) * scale over f32[n]: programs of one signature for each n."""
    t = f"tensor<{n}xf32>"
    return textwrap.dedent(f"""\
        module @m {{
          func.func public @main(%x: {t} loc("x")) -> ({t} {{jax.result_info = ""}}) {{
            %c = stablehlo.constant dense<{scale:.1f}> : {t}
            %t = stablehlo.tanh %x : {t}
            %y = stablehlo.multiply %t, %c : {t}
            return %y : {t}
          }}
        }}
        """)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setattr(cc.settings, "directory", str(tmp_path))
    monkeypatch.setattr(cc.settings, "min_compile_time_secs", 0.0)
    monkeypatch.setattr(cc.settings, "min_entry_size_bytes", 0)
    return tmp_path


def entries(d) -> list[pathlib.Path]:
    return sorted(p for p in pathlib.Path(d).iterdir() if p.suffix == ".mjaxexe")


def compile_fresh(kind: str, text: str):
    """(compiles, cache hits, executable) of a new backend: nothing cached in memory."""
    backend = BACKENDS[kind]()
    exe = backend.compile(text)
    return backend.stats["compiles"], backend.stats["cache_hits"], exe


def check(exe, scale: float, n: int = 16):
    x = np.linspace(-2, 2, n, dtype=np.float32)
    (y,) = exe.run_numpy(x)
    assert y.shape == (n,)
    np.testing.assert_allclose(y, np.tanh(x) * np.float32(scale), rtol=1e-5, atol=1e-6)


def store(kind: str, text: str, d) -> pathlib.Path:
    """Compiles `text` into the (empty of it) cache; the entry it wrote."""
    before = set(entries(d))
    c, h, exe = compile_fresh(kind, text)
    assert (c, h) == (1, 0)
    (new,) = set(entries(d)) - before
    return new


def read(path: pathlib.Path) -> cc.Entry:
    entry = cc.decode(path.read_bytes())
    assert entry is not None
    return entry


def write(path: pathlib.Path, entry: cc.Entry) -> None:
    path.write_bytes(cc.encode(entry))


# ---- what an entry records -------------------------------------------------------------
@pytest.mark.parametrize("kind", ["xla", "iree"])
def test_entry_records_key_platform_signature_and_hits(cache, kind):
    text = program(3.0)
    path = store(kind, text, cache)
    entry = read(path)
    assert entry.key == path.stem
    assert entry.platform == ("cpu" if kind == "xla" else "iree-llvm-cpu")
    assert entry.signature == "(tensor<16xf32>) -> (tensor<16xf32>)"
    c, h, exe = compile_fresh(kind, text)
    assert (c, h) == (0, 1)
    check(exe, 3.0)


def test_decode_rejects_every_damage():
    good = cc.encode(cc.Entry("k" * 64, "cpu", "() -> ()", b"payload" * 100))
    assert cc.decode(good) == cc.Entry("k" * 64, "cpu", "() -> ()", b"payload" * 100)
    damaged = [good[:-1], good[: len(good) // 2], b"\0" * len(good), b"", good + b"x",
               good[:50] + bytes([good[50] ^ 1]) + good[51:],      # in the header
               good[:-5] + bytes([good[-5] ^ 1]) + good[-4:]]      # in the payload
    for data in damaged:
        assert cc.decode(data) is None


# ---- damaged entries -------------------------------------------------------------------
def damage(path: pathlib.Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[:-100])
    elif how == "half_written":
        path.write_bytes(data[: len(data) // 2])
    elif how == "zeroed":
        path.write_bytes(b"\0" * len(data))
    elif how == "payload_bit":
        b = bytearray(data)
        b[-10] ^= 0x01
        path.write_bytes(bytes(b))
    elif how == "header_bit":
        b = bytearray(data)
        b[len(cc.MAGIC) + 32 + 12] ^= 0x01       # inside the recorded key
        path.write_bytes(bytes(b))
    elif how == "garbage":
        path.write_bytes(b"not an executable at all")
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "old_format":                      # mjax-exe-v1: no key, no signature
        payload = read(path).payload
        path.write_bytes(b"mjax-exe-v1\n" + hashlib.sha256(payload).digest() + payload)
    else:
        raise AssertionError(how)


DAMAGES = ["truncated", "half_written", "zeroed", "payload_bit", "header_bit", "garbage",
           "empty", "old_format"]


@pytest.mark.parametrize("kind,how", [("xla", h) for h in DAMAGES] +
                         [("iree", h) for h in ("truncated", "zeroed", "header_bit")])
def test_damaged_entry_is_a_miss_and_is_replaced(cache, monkeypatch, kind, how):
    text = program(3.0)
    path = store(kind, text, cache)
    damage(path, how)
    # A fast compile is not normally stored; replacing an unusable entry it is.
    monkeypatch.setattr(cc.settings, "min_compile_time_secs", 1e9)
    c, h, exe = compile_fresh(kind, text)
    assert (c, h) == (1, 0)
    check(exe, 3.0)
    assert read(path).key == path.stem                # replaced by a sound entry
    c, h, exe = compile_fresh(kind, text)
    assert (c, h) == (0, 1)
    check(exe, 3.0)


# ---- entries that are sound but belong to something else -----------------------------
@pytest.mark.parametrize("kind", ["xla", "iree"])
def test_swapped_entry_never_runs_the_other_program(cache, kind):
    a, b = program(3.0), program(5.0)          # one signature, different results
    path_a = store(kind, a, cache)
    path_b = store(kind, b, cache)
    os.replace(path_a, path_b)                 # b's name, a's executable
    c, h, exe = compile_fresh(kind, b)
    assert (c, h) == (1, 0)
    check(exe, 5.0)
    assert read(path_b).key == path_b.stem


@pytest.mark.parametrize("kind", ["xla", "iree"])
def test_forged_entry_with_a_foreign_executable_is_a_miss(cache, kind):
    """The header says program a (key, platform, signature; the checksum holds) but the
    executable takes f32[8]: the loader reads the executable's own types."""
    a, other = program(3.0, 16), program(3.0, 8)
    path_a = store(kind, a, cache)
    path_other = store(kind, other, cache)
    write(path_a, cc.Entry(**{**read(path_a).__dict__,
                              "payload": read(path_other).payload}))
    c, h, exe = compile_fresh(kind, a)
    assert (c, h) == (1, 0)
    check(exe, 3.0, 16)


@pytest.mark.parametrize("kind", ["xla", "iree"])
def test_entry_recorded_for_another_platform_or_signature_is_a_miss(cache, kind):
    text = program(3.0)
    path = store(kind, text, cache)
    genuine = read(path)
    for forged in (cc.Entry(genuine.key, "cuda", genuine.signature, genuine.payload),
                   cc.Entry(genuine.key, genuine.platform, "(tensor<8xf32>) -> "
                            "(tensor<8xf32>)", genuine.payload)):
        write(path, forged)
        c, h, exe = compile_fresh(kind, text)
        assert (c, h) == (1, 0)
        check(exe, 3.0)


def test_another_backends_executable_under_a_forged_header_is_a_miss(cache):
    text = program(3.0)
    xla_path, iree_path = store("xla", text, cache), store("iree", text, cache)
    xla_entry, iree_entry = read(xla_path), read(iree_path)
    write(xla_path, cc.Entry(**{**xla_entry.__dict__, "payload": iree_entry.payload}))
    write(iree_path, cc.Entry(**{**iree_entry.__dict__, "payload": xla_entry.payload}))
    for kind in ("xla", "iree"):
        c, h, exe = compile_fresh(kind, text)
        assert (c, h) == (1, 0)
        check(exe, 3.0)


# ---- signatures ------------------------------------------------------------------------
MIXED = """#loc1 = loc("f.py":3:4)
module @m {
  func.func private @helper(%a: tensor<f32>) -> tensor<f32> { return %a : tensor<f32> }
  func.func public @main(%a: tensor<16xf32> {mhlo.sharding = "{replicated}"} loc("x"),
      %b: tensor<2x3xi1> loc(#loc1), %c: tensor<4xui32>, %d: tensor<bf16>,
      %e: tensor<2xf64>) -> (tensor<16xf32> {jax.result_info = "result[0]"},
      tensor<complex<f32>>, tensor<4xui32>, tensor<2x3xi1>) {
    %k = stablehlo.constant dense<(1.0,2.0)> : tensor<complex<f32>>
    return %a, %k, %c, %b : tensor<16xf32>, tensor<complex<f32>>, tensor<4xui32>,
        tensor<2x3xi1>
  } loc(#loc1)
}"""
MIXED_SIGNATURE = ("(tensor<16xf32>, tensor<2x3xi1>, tensor<4xui32>, tensor<bf16>, "
                   "tensor<2xf64>) -> (tensor<16xf32>, tensor<complex<f32>>, "
                   "tensor<4xui32>, tensor<2x3xi1>)")


def test_program_signature_reads_main():
    assert str(cc.program_signature(MIXED)) == MIXED_SIGNATURE
    cases = {
        "func.func @main() {\n  return\n}": "() -> ()",
        "func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {": "(tensor<3xf32>) -> "
                                                                "(tensor<3xf32>)",
        "func.func @main(%x: !stablehlo.token) -> !stablehlo.token attributes {a} {":
            "(!stablehlo.token) -> (!stablehlo.token)",
        'sync func @main(%input0: tensor<2xi8>, %input1: tensor<bf16>) -> '
        '(%output0: tensor<2xi8>)': "(tensor<2xi8>, tensor<bf16>) -> (tensor<2xi8>)",
    }
    for text, expected in cases.items():
        assert str(cc.program_signature(text)) == expected
    assert cc.program_signature("module {}") is None


def test_executables_report_the_programs_signature():
    expected = cc.program_signature(MIXED)
    assert executable_signature(XlaBackend("cpu").compile(MIXED).loaded) == expected
    iree = _iree_backend()
    module = iree.runtime.VmModule.copy_buffer(iree.runtime.VmInstance(),
                                               iree._compile_artifact(MIXED))
    assert module_signature(module) == expected


def test_partitioned_signatures_compare_ranks_and_element_types():
    whole = cc.program_signature("func.func @main(%x: tensor<8x4xf32>) -> tensor<8x4xf32>")
    shard = cc.program_signature("func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32>")
    assert not whole.matches(shard)
    assert whole.matches(shard, exact_shapes=False)
    for other in ("tensor<4x4xf64>", "tensor<16xf32>", "tensor<4x4xcomplex<f32>>"):
        wrong = cc.program_signature(f"func.func @main(%x: {other}) -> tensor<4x4xf32>")
        assert not whole.matches(wrong, exact_shapes=False)


SPMD = """module @m attributes {mhlo.num_partitions = 2 : i32} {
  func.func public @main(%x: tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"})
      -> (tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) {
    %c = stablehlo.constant dense<2.0> : tensor<8x4xf32>
    %y = stablehlo.multiply %x, %c : tensor<8x4xf32>
    return %y : tensor<8x4xf32>
  }
}"""


def test_spmd_programs_hit(cache):
    for expect in ((1, 0), (0, 1)):
        backend = XlaBackend("cpu")
        if len(backend.devices()) < 2:
            pytest.skip("needs 2 CPU devices (XLA_FLAGS from test/conftest.py)")
        backend.compile(SPMD, backend.devices()[:2], num_partitions=2,
                        partitioning=("gspmd", (False,)))
        assert (backend.stats["compiles"], backend.stats["cache_hits"]) == expect


# ---- the file system -------------------------------------------------------------------
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
    sig = cc.program_signature("func.func @main() {")
    monkeypatch.setattr(cc.settings, "directory", None)
    assert cc.get("abc", platform="cpu", signature=sig) is None
    cc.put("abc", b"payload", platform="cpu", signature=sig)      # a no-op, not an error
    monkeypatch.setattr(cc.settings, "directory", str(tmp_path))
    monkeypatch.setattr(cc.settings, "min_entry_size_bytes", 0)
    cc.put("abc", b"payload", platform="cpu", signature=sig)
    assert cc.get("abc", platform="cpu", signature=sig) == b"payload"
    assert cc.get("abc", platform="cuda", signature=sig) is None
    assert cc.get("abd", platform="cpu", signature=sig) is None


def test_stale_temporary_files_are_removed(cache):
    sig = cc.program_signature("func.func @main() {")
    stale, fresh = cache / ".tmp-dead.part", cache / ".tmp-writing.part"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"half")
    old = time.time() - 2 * 3600
    os.utime(stale, (old, old))
    cc.put("abc", b"payload", platform="cpu", signature=sig)
    assert not stale.exists() and fresh.exists()


# ---- processes -------------------------------------------------------------------------
# A child process: jit-compiles one program and prints "<compiles> <hits> <sum>".
CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    import mjax, mjax.numpy as jnp
    from mjax.runtime import compilation_cache as cc, get_backend
    cc.settings.directory = sys.argv[1]
    cc.settings.min_compile_time_secs = 0.0
    scale = float(sys.argv[2])
    {prelude}
    f = mjax.jit(lambda x: jnp.tanh(x) * scale + jnp.sum(x ** 2))
    y = np.asarray(f(np.arange(16, dtype=np.float32)))
    st = get_backend().stats
    print(st["compiles"], st["cache_hits"], repr(float(y.sum())), flush=True)
""")

# Preludes that stop the child's cache write half-way (flushed to disk), or after the
# whole temporary file is written but before its rename, and wait to be killed.
STALL_MID_WRITE = textwrap.dedent("""
    import os, time
    _fdopen = os.fdopen
    class _Stalling:
        def __init__(self, f): self.f = f
        def __enter__(self): return self
        def __exit__(self, *exc): return False
        def write(self, data):
            self.f.write(data[: len(data) // 2]); self.f.flush(); os.fsync(self.f.fileno())
            print("STALLED", flush=True); time.sleep(600)
    os.fdopen = lambda fd, mode: _Stalling(_fdopen(fd, mode))
""")
STALL_BEFORE_RENAME = textwrap.dedent("""
    import os, time
    def _stall(src, dst):
        print("STALLED", flush=True); time.sleep(600)
    os.replace = _stall
""")


def child_env(backend: str = "xla") -> dict:
    env = dict(os.environ)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    env.pop("MJAX_COMPILATION_CACHE_DIR", None)
    env["MJAX_BACKEND"] = backend
    return env


def spawn(cache_dir, scale=3.0, prelude="", backend="xla") -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD.replace("{prelude}", prelude),
         str(cache_dir), str(scale)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=child_env(backend), cwd=ROOT)


def finish(p: subprocess.Popen) -> tuple[int, int, float]:
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    compiles, hits, total = out.split()
    return int(compiles), int(hits), float(total)


def run_child(cache_dir, scale=3.0, backend="xla"):
    return finish(spawn(cache_dir, scale, backend=backend))


def expected_total(scale=3.0):
    x = np.arange(16, dtype=np.float32)
    return float((np.tanh(x) * np.float32(scale) + np.sum(x ** 2)).sum())


@pytest.mark.parametrize("backend", ["xla", "iree"])
def test_second_process_skips_compilation(tmp_path, backend):
    if backend == "iree":
        needs_iree()
    c1, h1, t1 = run_child(tmp_path, backend=backend)
    assert c1 >= 1 and h1 == 0
    assert entries(tmp_path), "first process wrote no cache entry"
    c2, h2, t2 = run_child(tmp_path, backend=backend)
    assert c2 == 0 and h2 == c1, (c2, h2)
    np.testing.assert_allclose([t1, t2], expected_total(), rtol=1e-6)


def test_concurrent_writers(tmp_path):
    scales = (3.0, 5.0, 3.0, 5.0, 3.0, 5.0)
    procs = [spawn(tmp_path, s) for s in scales]
    for p, s in zip(procs, scales):
        np.testing.assert_allclose(finish(p)[2], expected_total(s), rtol=1e-6)
    assert len(entries(tmp_path)) == 2           # one per distinct program
    assert all(read(e).key == e.stem for e in entries(tmp_path))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]
    for s in (3.0, 5.0):
        c, h, t = run_child(tmp_path, s)
        assert (c, h) == (0, 1)
        np.testing.assert_allclose(t, expected_total(s), rtol=1e-6)


@pytest.mark.parametrize("stall", ["mid_write", "before_rename"])
@pytest.mark.parametrize("before", ["absent", "damaged"])
def test_writer_killed_mid_write(tmp_path, stall, before):
    if before == "damaged":           # an unusable entry the killed writer was replacing
        run_child(tmp_path)
        (entry,) = entries(tmp_path)
        entry.write_bytes(entry.read_bytes()[:-7])
    kept = {p.name: p.read_bytes() for p in entries(tmp_path)}
    p = spawn(tmp_path, prelude=STALL_MID_WRITE if stall == "mid_write" else
              STALL_BEFORE_RENAME)
    try:
        line = p.stdout.readline()
        assert line.strip() == "STALLED", p.stderr.read()[-3000:]
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    # The final names hold what they held; the dead writer's temporary file is ignored.
    assert {e.name: e.read_bytes() for e in entries(tmp_path)} == kept
    temporaries = [q for q in tmp_path.iterdir() if q.name.startswith(".tmp-")]
    assert len(temporaries) == 1
    c, h, t = run_child(tmp_path)
    assert (c, h) == (1, 0)
    np.testing.assert_allclose(t, expected_total(), rtol=1e-6)
    c, h, t = run_child(tmp_path)
    assert (c, h) == (0, 1)
    np.testing.assert_allclose(t, expected_total(), rtol=1e-6)
