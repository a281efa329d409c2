"""The package's architecture, checked: the frontend's floors (docs/design.md, "Floors")
with import-linter's `layers` contract (pyproject.toml), and the figures the floors keep,
counting imports inside functions too: no import cycle spans more than one subpackage,
no cycle in the frontend is longer than 3 modules, no function-local imports of mjax
modules in the frontend, no non-test file over 800 lines (generated files, marked as
such in their first lines, excepted).

    python test/test_architecture.py     # the same checks, as CI runs them (.ci/run)

pyproject's package-dir maps mjax -> frontend/, mjax.dialect -> dialect/, ... (an
editable install): import-linter (grimp) finds a package's modules by walking the
package's own directory, so it would miss mjax.dialect, mjax.passes and mjax.runtime.
The lint therefore runs over a copy of the tree laid out as installed.
"""
from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = {"mjax": "frontend", "mjax.dialect": "dialect", "mjax.passes": "passes",
            "mjax.runtime": "runtime"}
BELOW_FRONTEND = ("mjax.dialect", "mjax.passes", "mjax.runtime")
MAX_LINES = 800
MAX_FRONTEND_CYCLE = 3
# Frontend files that import MLIR's bindings, JAX's re-export shims aside (issue 56): the
# IR work belongs behind dialect/ and passes/ functions. A ratchet: lower it as files go.
MAX_MLIR_IMPORTERS = 10
BINDINGS = ("jaxlib.mlir", "jaxlib.mosaic", "mlir")
MLIR_SHIMS = ("frontend/_src/lib/mlir/", "frontend/extend/mlir/",
              "frontend/interpreters/mlir.py")

# Files that may name a platform ('cpu', 'tpu', 'cuda', 'rocm', 'gpu', or any record's
# name) in code, and why: the records (runtime's PlatformRecord, the passes'
# PLATFORM_RULES), a platform's own runtime module or code, the host CPU, or JAX's public
# spelling, which a new platform leaves alone (docs/design.md, "Adding a platform"). A new
# enumeration of platform names anywhere else fails test_platform_names_stay_in_their_files.
PLATFORM_CODE = {     # file -> (most platform names it may hold; None: no ceiling, why)
    "runtime/backend.py": (None, "the platform records, and Platform's parsing of names"),
    "runtime/tpu.py": (None, "the TPU's plugin module (finds and opens libtpu)"),
    "runtime/gpu_plugin.py": (None, "the CUDA and ROCm plugin module"),
    "runtime/iree.py": (5, "IREE's own targets, not XLA platforms"),
    "runtime/xla.py": (5, "XLA's CPU client, its host buffers and synchronous callbacks"),
    # the host CPU (beside an accelerator: jit(backend='cpu'), callbacks, colocated Python)
    "frontend/arrays/array.py": (1, "host"), "frontend/config/__init__.py": (1, "host"),
    "frontend/callbacks/debug.py": (1, "host"), "frontend/arrays/distributed.py": (2, "host: Gloo"),
    "frontend/arrays/dlpack.py": (2, "host: kDLCPU tensors go to the host's backend, as JAX"),
    "frontend/experimental/colocated_python/api.py": (3, "host"),
    "frontend/arrays/host_callbacks.py": (3, "host"), "frontend/jit/jitted.py": (4, "host"),
    "frontend/spmd/pmap.py": (1, "host"),
    "frontend/experimental/pallas/helpers.py": (1, "host: pl.estimate_cost's count where "
                                                   "the default has none (a TPU's)"),
    # JAX's public spellings and defaults
    "frontend/ffi.py": (3, "register_ffi_target(platform='cpu')"),
    "frontend/export/__init__.py": (4, "export's aliases ('gpu', 'host'), from_stablehlo's default"),
    "frontend/export/format.py": (1, "a serialized device's default platform"),
    "frontend/experimental/jax2tf/converter.py": (4, "the platforms XlaCallModule runs"),
    "frontend/experimental/tf2jax/xla_module.py": (1, "from_stablehlo's default"),
    "frontend/lax/platform.py": (1, "platform_dependent refuses 'gpu', as JAX"),
    "frontend/experimental/mesh_utils.py": (2, "GPU devices ordered by id, as JAX"),
    "frontend/tracing/primitive.py": (1, "mlir.LoweringRuleContext's default platforms"),
    "frontend/_src/test_util_devices.py": (5, "jtu's device tags ('tpu', 'gpu', 'cuda', "
                                              "'rocm', 'cpu': JAX's test helpers test for them)"),
    "frontend/experimental/pallas/__init__.py": (1, "the `tpu` submodule in __all__"),
    # one platform's own code: JAX's TPU algorithms, pltpu
    "frontend/experimental/pallas/tpu.py": (1, "pltpu.is_tpu_device"),
    "frontend/lax/linalg_tpu.py": (1, "JAX's TPU SVD, lowered for the TPU"),
    # JAX's lowering rules for one platform (jaxpr-to-stablehlo's `platform` option)
    "passes/rules/tables.py": (None, "PLATFORM_RULES: the per-platform rules each takes"),
    "passes/rules/linalg.py": (1, "the `backend=cpu` option's spelling"),
    "passes/rules/linalg_ffi.py": (1, "jaxlib's CPU custom-call registry"),
    "passes/rules/linalg_lapack.py": (1, "the `backend=cpu` option's spelling"),
    "passes/jaxpr_pallas_interpret.py": (1, "JAX's error for kernels on the CPU"),
    "passes/jaxpr_pallas_to_triton.py": (1, "Triton's platform option (CUDA, ROCm)"),
    "passes/triton/builders.py": (1, "ROCm's device library"),
    "passes/triton/kernel.py": (2, "Triton's defaults for CUDA and ROCm"),
}


def platform_names() -> set:
    """The names an XLA platform goes by: every record's in runtime/backend.py's
    PLATFORMS (the first argument of each `PlatformRecord(...)` there), and JAX's 'gpu'."""
    with open(os.path.join(ROOT, "runtime", "backend.py")) as fh:
        tree = ast.parse(fh.read())
    table = next(node.value for node in tree.body if isinstance(node, ast.AnnAssign)
                 and getattr(node.target, "id", "") == "PLATFORMS")
    return {node.args[0].value for node in ast.walk(table)
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "PlatformRecord"
            and node.args and isinstance(node.args[0], ast.Constant)} | {"gpu"}


def platform_literals(source: str, names) -> list:
    """Lines of `source` holding a string constant that is a platform name (docstrings
    aside; comments and longer strings never match)."""
    tree = ast.parse(source)
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef,
                                 ast.ClassDef)) and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}
    return sorted(node.lineno for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and node.value in names and id(node) not in docs)


def platform_naming_files() -> dict:
    """file (relative to the root) -> lines naming a platform, over frontend/, passes/
    and runtime/."""
    names, out = platform_names(), {}
    for folder in ("frontend", "passes", "runtime"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, folder)):
            dirnames[:] = [d for d in dirnames if not d.startswith((".", "__pycache__"))]
            for f in filenames:
                if f.endswith(".py"):
                    path = os.path.join(dirpath, f)
                    with open(path) as fh:
                        lines = platform_literals(fh.read(), names)
                    if lines:
                        out[os.path.relpath(path, ROOT).replace(os.sep, "/")] = lines
    return out


# ---- the import graph (as /work/shared/tools/arch_check.py builds it) -------------------------
def modules() -> dict:
    """module name -> file path, for every module of the package."""
    out = {}
    for pkg, folder in PACKAGES.items():
        top = os.path.join(ROOT, folder)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if not d.startswith((".", "__pycache__"))]
            for f in filenames:
                if f.endswith(".py"):
                    rel = os.path.relpath(os.path.join(dirpath, f), top)[:-3].split(os.sep)
                    if rel[-1] == "__init__":
                        rel = rel[:-1]
                    out[".".join([pkg] + rel)] = os.path.join(dirpath, f)
    return out


def _resolve(name: str, mods) -> str | None:
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def imports(mods) -> list:
    """(module, imported module, inside a function?, line) for every import of mjax."""
    out = []
    for mod, path in mods.items():
        tree = ast.parse(open(path, encoding="utf-8").read())
        base = mod if path.endswith("__init__.py") else mod.rpartition(".")[0]
        local = {id(sub) for fn in ast.walk(tree)
                 if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for sub in ast.walk(fn) if isinstance(sub, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                prefix = node.module or ""
                if node.level:
                    parts = base.split(".")
                    parts = parts[:len(parts) - node.level + 1]
                    prefix = ".".join(parts + ([node.module] if node.module else []))
                targets = [f"{prefix}.{a.name}" for a in node.names]
            else:
                continue
            for target in targets:
                found = _resolve(target, mods) if target.startswith("mjax") else None
                if found and found != mod:
                    out.append((mod, found, id(node) in local, node.lineno))
    return out


def cycles(mods, edges) -> list:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative)."""
    graph = {m: set() for m in mods}
    for a, b in edges:
        graph[a].add(b)
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def subpackage(module: str) -> str:
    """mjax.lax.control_flow -> mjax.lax; mjax.passes.rules.x -> mjax.passes; mjax.tracing.core ->
    mjax.tracing; mjax.ref -> mjax.ref."""
    return ".".join(module.split(".")[:2])


def _generated(path: str) -> bool:
    with open(path, encoding="utf-8") as f:
        head = "".join(next(f, "") for _ in range(5)).lower()
    return "generated file" in head


# ---- who imports MLIR's bindings ---------------------------------------------------------------
def _is_binding(module: str) -> bool:
    return any(module == b or module.startswith(b + ".") for b in BINDINGS)


def _absolute(node: ast.ImportFrom, mod: str, path: str) -> str:
    if not node.level:
        return node.module or ""
    parts = (mod if path.endswith("__init__.py") else mod.rpartition(".")[0]).split(".")
    parts = parts[:len(parts) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


def _binding_names(mods, trees) -> dict:
    """module -> the names its top level binds to a binding module or object: imported
    from the bindings, from another module's such names (a re-export), or assigned from
    one (`Value = ir.Value`). The shims' modules count as bindings themselves."""
    shim_mods = {m for m, p in mods.items()
                 if os.path.relpath(p, ROOT).startswith(MLIR_SHIMS)}
    out = {m: set() for m in mods}
    changed = True
    while changed:
        changed = False
        for mod, tree in trees.items():
            for node in tree.body:
                names = set()
                if isinstance(node, ast.Import):
                    names = {(a.asname or a.name).split(".")[0] for a in node.names
                             if _is_binding(a.name) or a.name in shim_mods}
                elif isinstance(node, ast.ImportFrom):
                    src = _absolute(node, mod, mods[mod])
                    for a in node.names:
                        full = f"{src}.{a.name}"
                        if (_is_binding(src) or src in shim_mods or full in shim_mods
                                or a.name in out.get(src, ())
                                or (src == "jaxlib" and _is_binding(full))):
                            names.add(a.asname or a.name)
                elif isinstance(node, ast.Assign):
                    root = node.value
                    while isinstance(root, ast.Attribute):
                        root = root.value
                    if isinstance(root, ast.Name) and root.id in out[mod]:
                        names = {t.id for t in node.targets if isinstance(t, ast.Name)}
                if names - out[mod]:
                    out[mod] |= names
                    changed = True
    return out


def mlir_importers() -> list:
    """The frontend files, shims aside, with an import (anywhere in the file) of MLIR's
    bindings, of a shim, or of a name some mjax module binds to them."""
    mods = modules()
    trees = {m: ast.parse(open(p, encoding="utf-8").read()) for m, p in mods.items()}
    exported = _binding_names(mods, trees)
    shim_mods = {m for m, p in mods.items()
                 if os.path.relpath(p, ROOT).startswith(MLIR_SHIMS)}
    out = []
    for mod, tree in trees.items():
        rel = os.path.relpath(mods[mod], ROOT)
        if not rel.startswith("frontend/") or rel.startswith(MLIR_SHIMS):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                hit = any(_is_binding(a.name) or _resolve(a.name, mods) in shim_mods
                          for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                src = _absolute(node, mod, mods[mod])
                # a package exposing its own shim submodule (jax.extend.mlir) is JAX's API
                names = [a.name for a in node.names
                         if not (src == mod and f"{src}.{a.name}" in shim_mods)]
                hit = (_is_binding(src) or src in shim_mods
                       or any(f"{src}.{n}" in shim_mods or n in exported.get(src, ())
                              or (src == "jaxlib" and _is_binding(f"jaxlib.{n}"))
                              for n in names))
            else:
                continue
            if hit:
                out.append(rel)
                break
    return sorted(out)


def figures() -> dict:
    mods = modules()
    found = imports(mods)
    edges = {(a, b) for a, b, _, _ in found}
    comps = cycles(mods, edges)
    return {
        "cycles across subpackages": [c for c in comps
                                      if len({subpackage(m) for m in c}) > 1],
        "frontend cycles too long": [c for c in comps if len(c) > MAX_FRONTEND_CYCLE and
                                     not c[0].startswith(BELOW_FRONTEND)],
        "function-local imports in the frontend": sorted(
            f"{mods[a]}:{line} imports {b}" for a, b, is_local, line in found
            if is_local and not a.startswith(BELOW_FRONTEND)),
        "files over 800 lines": sorted(
            f"{path}: {n}" for path in mods.values()
            if (n := sum(1 for _ in open(path, encoding="utf-8"))) > MAX_LINES
            and not _generated(path)),
    }


# ---- import-linter -------------------------------------------------------------------------------
def lint_imports(inject=None) -> subprocess.CompletedProcess:
    """lint-imports over a copy of the tree laid out as installed (see the docstring);
    `inject`: (file of the copy, a line appended to it)."""
    with tempfile.TemporaryDirectory() as tmp:
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(os.path.join(ROOT, "frontend"), os.path.join(tmp, "mjax"),
                        ignore=ignore)
        for pkg, folder in PACKAGES.items():
            if pkg != "mjax":
                shutil.copytree(os.path.join(ROOT, folder),
                                os.path.join(tmp, *pkg.split(".")), ignore=ignore)
        shutil.copy(os.path.join(ROOT, "pyproject.toml"), tmp)
        if inject is not None:
            with open(os.path.join(tmp, inject[0]), "a", encoding="utf-8") as f:
                f.write("\n" + inject[1] + "\n")
        env = dict(os.environ, PYTHONPATH=tmp)
        return subprocess.run(
            [sys.executable, "-c", "import sys; from importlinter.cli import "
             "lint_imports_command; sys.argv[0] = 'lint-imports'; "
             "sys.exit(lint_imports_command())", "pyproject.toml", "--no-cache",
             "--no-logo"],
            cwd=tmp, env=env, capture_output=True, text=True, timeout=600)


def needs_import_linter() -> None:
    """Skips on the TPU machine, where import-linter (a test dependency) is not installed;
    elsewhere (CI) a missing import-linter fails the test, as a missing dependency should."""
    if os.environ.get("MJAX_TEST_TPU", "") not in ("", "0") and \
            importlib.util.find_spec("importlinter") is None:
        import pytest
        pytest.skip("TPU: needs import-linter, a test dependency not installed on the TPU "
                    "machine")


def test_import_linter_floors():
    needs_import_linter()
    result = lint_imports()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout, result.stdout


def test_linter_sees_the_whole_package():
    """The copy's `mjax` is the one linted (not an installed one), dialect included."""
    mods = modules()
    assert {"mjax.dialect", "mjax.passes", "mjax.runtime", "mjax.tracing.core"} <= set(mods)


def test_figures():
    bad = {k: v for k, v in figures().items() if v}
    assert not bad, "\n".join(f"{k}:\n  " + "\n  ".join(map(str, v)) for k, v in bad.items())


def test_mlir_importers_ceiling():
    found = mlir_importers()
    assert len(found) <= MAX_MLIR_IMPORTERS, "\n".join(found)


def test_mlir_importers_sees_reexports():
    """A name bound to the bindings counts wherever it is imported from: directly, through
    a re-export, a chain of them, or an assignment."""
    mods = {"mjax.a": "a.py", "mjax.b": "b.py", "mjax.c": "c.py", "mjax.d": "d.py"}
    trees = {"mjax.a": ast.parse("from jaxlib.mlir import ir\nV = ir.Value\nx = 1"),
             "mjax.b": ast.parse("from mjax.a import ir as _ir, x"),
             "mjax.c": ast.parse("from .b import _ir"),
             "mjax.d": ast.parse("from mjax.a import x")}
    found = _binding_names(mods, trees)
    assert found["mjax.a"] == {"ir", "V"} and found["mjax.b"] == {"_ir"}
    assert found["mjax.c"] == {"_ir"} and found["mjax.d"] == set()


def test_an_upward_import_fails_the_lint():
    """The contract can fail: lax importing mjax.numpy, even inside a function, breaks it."""
    needs_import_linter()
    result = lint_imports(("mjax/lax/elementwise.py",
                           "def _upward():\n    import mjax.numpy  # noqa"))
    assert result.returncode != 0
    assert "mjax.lax is not allowed to import mjax.numpy" in result.stdout, result.stdout


def test_platform_names_stay_in_their_files():
    """A new platform is its record, its runtime module and its own rules: no other file
    lists platforms, and the files that name one for a reason name no more."""
    found = platform_naming_files()
    new = {f: lines for f, lines in found.items() if f not in PLATFORM_CODE or
           PLATFORM_CODE[f][0] is not None and len(lines) > PLATFORM_CODE[f][0]}
    assert not new, ("platform names outside PLATFORM_CODE, or more than it allows "
                     f"(state the fact in the platform's record, runtime/backend.py): {new}")


def test_platform_literals_finds_an_enumeration():
    """The scan can fail: a tuple of platform names is found, a docstring is not."""
    source = ('"""Runs on \'cpu\'."""\ndef f(p):\n    """cpu"""\n'
              '    return p in ("cuda", "rocm")\n')
    assert platform_literals(source, {"cpu", "cuda", "rocm"}) == [4, 4]
    assert platform_literals("x = 'cpus'  # 'cpu'\n", {"cpu"}) == []


def test_cycles_finds_a_cycle():
    assert cycles({"a": 0, "b": 0, "c": 0, "d": 0},
                  {("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}) == [["a", "b", "c"]]


if __name__ == "__main__":
    result = lint_imports()
    print(result.stdout + result.stderr)
    bad = {k: v for k, v in figures().items() if v}
    found = mlir_importers()
    print(f"{len(found)} frontend files import MLIR's bindings (ceiling "
          f"{MAX_MLIR_IMPORTERS}):\n  " + "\n  ".join(found))
    if len(found) > MAX_MLIR_IMPORTERS:
        bad["MLIR importers over the ceiling"] = found
    named = platform_naming_files()
    over = [f"{f}: lines {lines}" for f, lines in named.items() if f not in PLATFORM_CODE
            or PLATFORM_CODE[f][0] is not None and len(lines) > PLATFORM_CODE[f][0]]
    if over:
        bad["platform names outside PLATFORM_CODE (put the fact in the record)"] = over
    for k, v in bad.items():
        print(f"{k}:\n  " + "\n  ".join(map(str, v)))
    sys.exit(1 if result.returncode or bad else 0)
