"""Runs chosen test files of JAX's library ecosystem under real jax and under mjax (through
`python -m mjax -m pytest`, so `import jax` is mjax), side by side, and writes
docs/ecosystem.md: per library its version, the files, tests passed on each, and the
main causes of the rest (issue 21.4).

    python -m venv --system-site-packages /work/venvs/eco
    /work/venvs/eco/bin/pip install -e . --no-deps
    /work/venvs/eco/bin/pip install -c benchmarks/ecosystem_constraints.txt \\
        flax equinox optax numpyro distrax dm-haiku diffrax blackjax chex scikit-learn
    /work/venvs/eco/bin/python benchmarks/ecosystem.py [--fast] [--lib optax ...]

The libraries' own environment is a separate venv so the shared site-packages keeps its
packages. Test files come from the installed packages (optax, chex, haiku and distrax
ship theirs) or from the library's repository at the pinned release, unpacked under
--tests-dir (the others' wheels carry no tests). Results per file are cached (--cache)
so a long survey can be resumed. Each file runs in its own
process under each of jax and mjax; a failure's cause is read from pytest's summary
(`-rfE`): a missing module or name, a user-defined primitive, a JAX-private (jax._src)
name, a wrong result (AssertionError), or another error class.
"""
from __future__ import annotations

import argparse
import collections
import json
import importlib.metadata
import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

# library -> (distribution, import name, where its tests are, test files there).
# "package": the installed package ships them; "checkout": the library's repository at
# the pinned release, under --tests-dir/<library>/ (fetched by hand: wheels of these
# carry no tests). Chosen to be representative and to run in minutes on 2 cores.
LIBS = {
    "optax": ("optax", "optax", "package", [
        "_src/base_test.py", "_src/update_test.py", "_src/numerics_test.py",
        "_src/combine_test.py", "_src/utils_test.py", "_src/linear_algebra_test.py"]),
    "chex": ("chex", "chex", "package", [
        "_src/dataclass_test.py", "_src/dimensions_test.py",
        "_src/asserts_internal_test.py", "_src/warnings_test.py"]),
    "haiku": ("dm-haiku", "haiku", "package", [
        "_src/basic_test.py", "_src/base_test.py"]),
    "distrax": ("distrax", "distrax", "package", [
        "_src/distributions/normal_test.py", "_src/bijectors/tanh_test.py"]),
    "flax": ("flax", "flax", "checkout", [
        "tests/struct_test.py", "tests/traverse_util_test.py",
        "tests/linen/linen_linear_test.py"]),
    "flax.nnx": ("flax", "flax.nnx", "checkout", [
        "tests/nnx/module_test.py", "tests/nnx/rngs_test.py"]),
    "equinox": ("equinox", "equinox", "checkout", [
        "tests/test_module.py", "tests/test_filters.py", "tests/test_jit.py"]),
    "numpyro": ("numpyro", "numpyro", "checkout", [
        "test/test_handlers.py", "test/test_util.py"]),
    "diffrax": ("diffrax", "diffrax", "checkout", [
        "test/test_term.py", "test/test_interpolation.py"]),
    "blackjax": ("blackjax", "blackjax", "checkout", ["tests/test_util.py"]),
}
FAST = {"optax": ["_src/base_test.py"], "chex": ["_src/dimensions_test.py"]}

_SUMMARY = re.compile(r"(\d+) (passed|failed|error|errors|skipped)")


def _package_dir(import_name: str) -> pathlib.Path:
    spec = importlib.util.find_spec(import_name.split(".")[0])
    return pathlib.Path(spec.origin).parent


def _env() -> dict:
    env = dict(os.environ)
    env.update(TF_CPP_MIN_LOG_LEVEL="3", JAX_PLATFORMS="cpu", PYTHONWARNINGS="ignore")
    return env


def run_file(path: pathlib.Path, mode: str, timeout: int) -> dict:
    """pytest over one file under jax or mjax -> counts and failure lines."""
    cmd = [sys.executable] + (["-m", "mjax"] if mode == "mjax" else []) + [
        "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", "-p", "no:randomly",
        "--tb=line", str(path)]
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=_env(), cwd=path.parent)
        out = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) \
            else (e.stdout or "")
        out += f"\nTIMEOUT after {timeout}s"
    counts = collections.Counter()
    tail = [line for line in out.splitlines()
            if re.search(r"\b(passed|failed|error|errors|skipped|no tests ran)\b.* in [\d.]+s", line)]
    for n, kind in _SUMMARY.findall(tail[-1] if tail else ""):
        counts["error" if kind.startswith("error") else kind] += int(n)
    failures = [line for line in out.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    if not tail:
        failures.append("ERROR (no pytest summary) " + (out.strip().splitlines() or [""])[-1])
        counts["error"] += 1
    return {"counts": dict(counts), "failures": failures, "seconds": time.time() - t0}


def cause_of(line: str) -> str:
    """The cause class of one failure line of pytest's short summary."""
    msg = line.split(" - ", 1)[1] if " - " in line else line
    if "jax._src" in msg:
        return "private API (jax._src)"
    if "user-defined primitive" in msg or "issue 21, part 2" in msg:
        return "user-defined primitives"
    if "mjax lacks it" in msg or "ModuleNotFoundError" in msg or "ImportError" in msg:
        return "missing module"
    if "has no attribute" in msg:
        return "missing name"
    if msg.startswith("AssertionError") or "Not equal to tolerance" in msg or \
            "Arrays are not" in msg:
        return "wrong result (assertion)"
    if "NotImplementedError" in msg:
        return "not implemented in mjax"
    if "TIMEOUT" in msg:
        return "timeout"
    m = re.match(r"(\w+(Error|Exception|Warning))", msg.strip())
    return f"error class: {m.group(1)}" if m else "other"


def import_status(import_name: str, mode: str) -> str:
    """'ok' or the last line of the error importing the library."""
    prefix = "import mjax; mjax.alias_jax(); " if mode == "mjax" else ""
    cmd = [sys.executable, "-c", f"{prefix}import {import_name}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=_env())
    if proc.returncode == 0:
        return "ok"
    lines = [x for x in proc.stderr.strip().splitlines() if x and not x.startswith(" ")]
    return lines[-1] if lines else f"exit {proc.returncode}"


def survey(libs, fast: bool, timeout: int, tests_dir: pathlib.Path, cache: dict,
           save) -> list[dict]:
    rows = []
    for lib in libs:
        dist, import_name, where, files = LIBS[lib]
        files = FAST.get(lib, []) if fast else files
        base = _package_dir(import_name) if where == "package" else \
            tests_dir / lib.split(".")[0]
        paths = [base / f for f in files if (base / f).exists()]
        row = {"lib": lib, "version": importlib.metadata.version(dist), "files": [],
               "jax": collections.Counter(), "mjax": collections.Counter(),
               "causes": collections.Counter(), "examples": {},
               "import": {m: import_status(import_name, m) for m in ("jax", "mjax")}}
        for p in paths:
            res = {}
            for m in ("jax", "mjax"):
                key = f"{lib}:{p.relative_to(base)}:{m}"
                if key not in cache:
                    cache[key] = run_file(p, m, timeout)
                    save()
                res[m] = cache[key]
                res[m]["counts"] = collections.Counter(res[m]["counts"])
            row["files"].append(str(p.relative_to(base)))
            for m in ("jax", "mjax"):
                row[m].update(res[m]["counts"])
            passed_on_jax = {f.split(" ")[1] for f in res["jax"]["failures"]}
            for f in res["mjax"]["failures"]:
                if f.split(" ")[1] in passed_on_jax:
                    continue   # (fails on jax too: not an mjax gap)
                c = cause_of(f)
                row["causes"][c] += 1
                row["examples"].setdefault(c, f[:220])
            print(f"{lib} {p.name}: jax {dict(res['jax']['counts'])} "
                  f"mjax {dict(res['mjax']['counts'])}", flush=True)
        rows.append(row)
    return rows


def render(rows) -> str:
    lines = [
        "# JAX's library ecosystem on mjax",
        "",
        "Generated by `benchmarks/ecosystem.py` (see its docstring for the environment: a "
        "separate venv with the libraries pinned by `benchmarks/ecosystem_constraints.txt`). "
        "Each test file runs under real jax 0.10.2 and under mjax (`python -m mjax -m "
        "pytest FILE`, so `import jax` is mjax). Failures under mjax of tests that also "
        "fail under jax are not counted as causes. A cause `private API (jax._src)` is a "
        "test or library reaching into JAX's internals.",
        "",
        "| library | version | imports on mjax | files | passed on jax | passed on mjax | "
        "failed/errors on mjax | main causes on mjax |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        causes = ", ".join(f"{c} ({n})" for c, n in r["causes"].most_common(4)) or "-"
        imp = r["import"]["mjax"]
        imp = "yes" if imp == "ok" else f"no: `{imp[:120]}`"
        lines.append(f"| {r['lib']} | {r['version']} | {imp} | {len(r['files'])} | "
                     f"{r['jax']['passed']} | {r['mjax']['passed']} | "
                     f"{r['mjax']['failed'] + r['mjax']['error']} | {causes} |")
    lines += ["", "## Files and an example of each cause", ""]
    for r in rows:
        lines.append(f"### {r['lib']} {r['version']}")
        lines.append("")
        lines.append("Files: " + (", ".join(f"`{f}`" for f in r["files"]) or "none run "
                                  "(the wheel ships no tests)"))
        for c, ex in r["examples"].items():
            lines.append(f"- {c}: `{ex}`")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", nargs="*", default=list(LIBS))
    parser.add_argument("--fast", action="store_true", help="one small file per library")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per file run")
    parser.add_argument("--tests-dir", default="/tmp/eco_tests",
                        help="folder with each checkout library's repository (LIB/...)")
    parser.add_argument("--cache", default="/tmp/mjax_ecosystem_results.json",
                        help="per-file results kept between runs (delete to rerun)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "ecosystem.md"))
    args = parser.parse_args(argv)
    cache_path = pathlib.Path(args.cache)
    cache = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    save = lambda: cache_path.write_text(json.dumps(cache))  # noqa: E731
    rows = survey(args.lib, args.fast, args.timeout, pathlib.Path(args.tests_dir), cache,
                  save)
    pathlib.Path(args.out).write_text(render(rows))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
