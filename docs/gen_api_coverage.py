"""Writes docs/api_coverage.md: every public module and name of JAX, and which mjax lacks.

    python docs/gen_api_coverage.py            # rewrites docs/api_coverage.md
    python docs/gen_api_coverage.py --out P    # writes the page to P instead

The list is generated from the installed JAX (a test-only oracle): every module under
`jax.` that pkgutil finds and `import` loads (no path part starting with `_`, so `jax._src`
is out), and every public name of each (no leading underscore; a name bound to a module
counts only when that module is itself a public `jax.` module, so `jax.version.os` does
not). Each is looked up on the mjax module of the same path (`jax.numpy.sum` ->
`mjax.numpy.sum`). A missing module or name takes its reason from REASONS, the one place
reasons live; keys are full JAX names or patterns: `*` stays within one module
("jax.lax.*_p"), a trailing `.**` covers a module and everything under it
("jax.experimental.mosaic.gpu.**"). One without a reason is "missing (no reason yet)", which
test/test_api_coverage.py refuses, as it refuses a REASONS entry that explains nothing.
Names that exist are compared for signatures by test/frontend/test_signatures.py, over
the modules this script lists. This script imports the real `jax`; mjax never does.
"""
from __future__ import annotations

import __future__
import argparse
import fnmatch
import functools
import importlib
import inspect
import json
import os
import pathlib
import pkgutil
import subprocess
import sys
import warnings

NOT_YET = "not implemented yet"
NO_REASON = "missing (no reason yet)"
_PRIMITIVE = ("JAX's Primitive object of a primitive mjax has no jaxpr op for (each op of "
              "the dialect has one, as mjax.lax.<name>_p: mjax/tracing/primitive.py)")
_SPECIAL = (f"{NOT_YET} in mjax.scipy.special (lax has lgamma, digamma, polygamma, erf_inv; "
            "this one needs its own series/recurrence or a primitive mjax lacks)")
_SCIPY_LINALG = (f"{NOT_YET} in mjax.scipy.linalg (the basics, special matrices and expm "
                 "exist; this one needs its own algorithm)")
_NN = f"{NOT_YET} in mjax.nn"
_MOSAIC = ("Mosaic GPU's own Python API is not modelled: mjax's Pallas compiles GPU kernels "
           "through Triton (TPU kernels: mjax.experimental.mosaic.as_tpu_kernel, and "
           "Pallas through --jaxpr-pallas-to-mosaic)")
_JAX_INTERNAL = ("JAX's tracing internals (Trace/Tracer classes of its interpreters); mjax "
                 "traces into the jaxpr MLIR dialect, its tracers are mjax.core's")

REASONS = {
    # ---- jax.numpy
    "jax.numpy.int1": "ml_dtypes' 1-bit types are not exported: mjax.dtypes maps no MLIR "
                      "element type to them (int2/int4 and uint2/uint4 are exported)",
    "jax.numpy.uint1": "see jax.numpy.int1",
    "jax.numpy.float6_*": "ml_dtypes' float6 types are not exported: mjax.dtypes maps no "
                          "MLIR element type to them (the float8 and float4 types are)",
    # ---- jax.lax
    "jax.random.*_p": _PRIMITIVE,
    "jax.lax.AccuracyMode": "the `accuracy=` control of transcendental ops (result "
                            "accuracy of exp, log, ...) is not supported",
    "jax.lax.Tolerance": "see jax.lax.AccuracyMode",
    "jax.lax.ragged_*": f"{NOT_YET}: no ragged (grouped) jaxpr op",
    "jax.lax.after_all": "XLA tokens are not exposed: mjax orders its effects (callbacks, "
                         "debug prints) itself",
    "jax.lax.create_token": "see jax.lax.after_all",
    "jax.lax.dce_sink": "internal JAX helper (keeps a value alive through dead-code "
                        "elimination); mjax's --jaxpr-dce has no such sink",
    "jax.lax.stage": "internal JAX staging helper without an mjax counterpart",
    "jax.lax.shape_as_value": "dynamic shapes are not supported (mjax shapes are static)",
    "jax.lax.psend": f"{NOT_YET}: point-to-point send/recv between devices",
    "jax.lax.precv": "see jax.lax.psend",
    "jax.lax.scaled_dot": f"{NOT_YET}: block-scaled (microscaling) dot products",
    # ---- jax.scipy.linalg
    # ---- jax.scipy.special
    # ---- jax.nn
    # ---- jax (top level)
    "jax.array_garbage_collection_guard": f"{NOT_YET}: a guard on arrays freed by the garbage collector",
    "jax.jax2tf_associative_scan_reductions": "an option of jax2tf's "
                                             "non-native lowering; mjax's jax2tf is native",
    "jax.thread_guard": "see jax.no_execution",
    "jax.remove_size_one_mesh_axis_from_type": "a sharding-in-types option; shardings are "
                                               "not part of mjax's types",
    "jax.auto_pcast": "see jax.remove_size_one_mesh_axis_from_type",
    # ---- modules of JAX's own internals, tools and platforms
    "jax.cloud_tpu_init": ("deprecated since JAX 0.8.1 (importing it only warns); mjax finds "
                           "libtpu itself (runtime/backend.py)"),
    "jax.tools.**": "JAX's command-line tools (jax_to_ir, the Nsight profile converter); "
                    "mjax's tool is mjax-opt",
    "jax.experimental.mosaic.gpu.**": _MOSAIC,
    "jax.experimental.mosaic.dialects": ("JAX's re-export of jaxlib's Mosaic dialect "
                                         "bindings: import jaxlib.mosaic.python.tpu, what it "
                                         "holds, to build modules for as_tpu_kernel"),
    "jax.experimental.mosaic.lowered_as_tpu_kernel": (
        f"{NOT_YET}: a module already through Mosaic's own passes (as_tpu_kernel takes "
        "the module before them)"),
    "jax.experimental.mosaic.lower_module_to_custom_call": (
        "JAX's lowering-rule API (a mlir.LoweringRuleContext); mjax's kernels go through "
        "as_tpu_kernel"),
    "jax.experimental.pallas.tpu_sc.*": ("SparseCore vector operations: mjax's Pallas "
                                         "compiles for TensorCores only (the module's "
                                         "meshes and get_sparse_core_info raise "
                                         "NotImplementedError)"),
    "jax.experimental.pallas.mosaic_gpu.**": _MOSAIC,
    "jax.experimental.pallas.ops.**": ("JAX's library of Pallas kernels (attention, matmul, "
                                       "...): user code over the Pallas API, not part of "
                                       "mjax; its TPU kernels run unmodified on mjax when "
                                       "loaded from JAX's files "
                                       "(test/pallas/test_jax_tpu_kernels.py)"),
    "jax.experimental.multihost_utils.*": ("the module's imports and its multi-process "
                                           "primitives' internals; live_devices and "
                                           "ProcessFailureError belong to JAX's fault-"
                                           "tolerant multi-process runtime, and mjax runs one "
                                           "process per program"),
    "jax.experimental.jet.*": ("the module's own imports (typing, functools, tree_util) "
                               "and its tracer internals (JetTrace, JetTracer, jet_fun, "
                               "jet_subtrace); mjax's jet is an interpreter over the jaxpr"),
    "jax.experimental.ode.*": ("the module's own imports (typing, functools, tree_util, "
                               "util helpers); odeint is there"),
    "jax.experimental.pallas.*": f"{NOT_YET} in mjax.experimental.pallas (its core: "
                                 "pallas_call, BlockSpec, refs, program ids, atomics)",
    "jax.experimental.pallas.triton.*": f"{NOT_YET} in mjax.experimental.pallas.triton",
    "jax.extend.pallas.**": "JAX's Pallas lowering-rule registry (Mosaic/Triton internals)",
    "jax.experimental.array_serialization.pytree_serialization.**": (
        f"{NOT_YET}: whole-pytree save/load (the array-level serialization and "
        "tensorstore_impl modules exist)"),
    "jax.experimental.array_serialization.pytree_serialization_utils.**": (
        "see jax.experimental.array_serialization.pytree_serialization"),
    **{f"jax.experimental.array_serialization.{m}.*": (
        "the module's imports (typing names, Format, functools.partial, "
        "make_single_device_sharding), not API of its own") for m in (
            "serialization", "tensorstore_impl")},
    **{f"jax.experimental.colocated_python.{m}.**": (
        "the colocated runtime's side (the remote host's function and object stores); "
        "mjax runs one process and calls the function there") for m in (
            "func_backend", "obj_backend")},
    **{f"jax.experimental.colocated_python.{m}.*": (
        "the module's imports (typing names, api_boundary, wraps) and the internals of "
        "JAX's remote execution (backend caches, the instance registry, PRNG-key "
        "physical shardings); mjax runs the function in its own process") for m in (
            "api", "func", "obj", "serialization")},
    "jax.experimental.source_mapper.**": "JAX's source-map tooling over its own HLO "
                                         "dumps; mjax ops carry file:line locations",
    "jax.experimental.roofline.**": f"{NOT_YET}: roofline cost estimates",
    **{f"jax.experimental.sparse.{sub}.*": (
        "an internal of JAX's sparse submodule (typing aliases, layout-info tuples, vmap "
        "and tracing helpers, per-module primitives); mjax's sparse ops are compositions of "
        "lax ops, and its public sparse API is the package's own names")
       for sub in ("ad", "api", "bcoo", "bcsr", "coo", "csr", "linalg", "random",
                   "transform", "util")},
    "jax.experimental.sparse.test_util.**": "JAX's own sparse test-suite helpers (random "
                                            "sparse fixtures for its tests), not user API",
    "jax.experimental.jax2tf.call_tf": f"{NOT_YET}: calling TensorFlow from mjax (mjax's "
                                       "tf2jax converts TF functions instead)",
    "jax.experimental.jax2tf.jax2tf": "mjax.experimental.jax2tf is one module (convert)",
    "jax.experimental.jax2tf.split_to_logical_devices": "TPU-sharding helper of jax2tf's "
                                                        "non-native path",
    "jax.experimental.EArray": "JAX's extended-dtype arrays (internal)",
    "jax.experimental.primal_tangent_dtype": "see jax.experimental.EArray",
    "jax.experimental.buffer_callback": f"{NOT_YET}: callbacks over device buffers",
    "jax.experimental.compute_on": "compute placement on host/device streams is not "
                                   "modelled",
    "jax.experimental.control_deps": "see jax.lax.after_all",
    "jax.experimental.custom_partitioning": f"{NOT_YET}: user SPMD partitioning rules",
    "jax.experimental.fused": f"{NOT_YET}",
    "jax.experimental.key_reuse": f"{NOT_YET} as a module (jax_debug_key_reuse exists)",
    "jax.experimental.profiler": f"{NOT_YET} (mjax.profiler exists)",
    "jax.experimental.rnn": f"{NOT_YET}: cuDNN LSTM",
    "jax.experimental.scheduling_groups": "XLA scheduling annotations are not emitted",
    "jax.experimental.serialize_executable": f"{NOT_YET}: pickled compiled executables "
                                             "(mjax.export serializes StableHLO)",
    "jax.experimental.shard_alike": f"{NOT_YET}",
    "jax.experimental.topologies": ("TPU topology descriptions, for compiling for a TPU "
                                    "slice without its devices, are not modelled"),
    "jax.experimental.transfer": "IFRT cross-host transfer servers are not modelled",
    # ---- jax.scipy
    # ---- small modules
    "jax.custom_derivatives.remat_opt_p": _PRIMITIVE,
    "jax.lax.linalg.*_p": _PRIMITIVE,
    "jax.lax.linalg.*": f"{NOT_YET} in mjax.lax.linalg",
    # ---- jax.extend and jax.interpreters (issue 21: user primitives come in part 2)
    "jax.extend.core.primitives.*": _PRIMITIVE,
    "jax.extend.core.AbstractToken": "see jax.lax.after_all",
    "jax.extend.core.Token": "see jax.lax.after_all",
    "jax.extend.core.*": _JAX_INTERNAL,
    "jax.extend.backend.*": "backend factories are mjax.runtime's (XLA, IREE)",
    "jax.extend.lowering": "JAX's lowering-rule context; mjax lowers with "
                           "--jaxpr-to-stablehlo and its rule tables",
    "jax.extend.sharding": "GSPMD sharding protos; mjax.sharding uses Shardy",
    "jax.extend.xla": "HLO module transformation hooks are not supported",
    "jax.interpreters.ad.JVPTrace": _JAX_INTERNAL,
    "jax.interpreters.mlir.*": "JAX's jaxpr-to-MLIR lowering internals; mjax lowers with "
                               "--jaxpr-to-stablehlo (user lowering rules: issue 21 part 2)",
    "jax.interpreters.partial_eval.*": _JAX_INTERNAL,
    "jax.interpreters.pxla.*": "see jax.extend.backend",
    "jax.interpreters.xla.*": "JAX's legacy XLA dispatch internals",
}


def _is_public_module_name(name: str) -> bool:
    return name.split(".")[0] == "jax" and not any(p.startswith("_") for p in name.split("."))


def _counts(value) -> bool:
    """Whether a public attribute is part of JAX's API (not an imported helper module)."""
    if isinstance(value, __future__._Feature):
        return False
    if inspect.ismodule(value):
        return _is_public_module_name(value.__name__)
    return True


def public_names(module) -> list[str]:
    return sorted(n for n in dir(module)
                  if not n.startswith("_") and _counts(getattr(module, n, None)))


@functools.lru_cache(maxsize=None)
def jax_modules() -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(every public jax module that imports, [(module, error) for those that do not]),
    found in a child process: importing all of jax loads TensorFlow (jax2tf), which must
    not share a process with the test suite's compiles (issue 26.3)."""
    data = json.loads(_child("--list-modules"))
    return tuple(data["found"]), tuple(map(tuple, data["broken"]))


def survey_in_child() -> dict:
    """survey(), run in a child process for the same reason as jax_modules()."""
    data = json.loads(_child("--survey"))
    return {"modules": [tuple(m) for m in data["modules"]],
            "broken": [tuple(b) for b in data["broken"]],
            "unsupported": [tuple(u) for u in data.get("unsupported", ())]}


def _child(flag: str) -> str:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "3")}
    proc = subprocess.run([sys.executable, __file__, flag], capture_output=True, text=True,
                          env=env, timeout=900)
    if proc.returncode:
        raise RuntimeError(f"{__file__} {flag} failed:\n{proc.stderr[-4000:]}")
    return proc.stdout.strip().splitlines()[-1]


def _walk_jax_modules() -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """jax_modules() in this process."""
    import jax
    found, broken = ["jax"], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for info in pkgutil.walk_packages(jax.__path__, "jax.", onerror=lambda _: None):
            if not _is_public_module_name(info.name):
                continue
            try:
                importlib.import_module(info.name)
            except Exception as e:  # an optional dependency JAX's module needs
                broken.append((info.name, f"{type(e).__name__}: {str(e).splitlines()[0]}"))
                continue
            found.append(info.name)
    return tuple(sorted(found)), tuple(broken)


def reason_for(name: str) -> str | None:
    """The reason a module or name is missing: its exact entry, else the longest matching
    pattern."""
    if name in REASONS:
        return REASONS[name]
    matches = []
    for k in REASONS:
        if k.endswith(".**"):
            if name == k[:-3] or name.startswith(k[:-2]):
                matches.append(k)
        elif any(c in k for c in "*?[") and k.count(".") == name.count(".") and \
                fnmatch.fnmatchcase(name, k):
            matches.append(k)
    return REASONS[max(matches, key=len)] if matches else None


def mjax_module(jax_name: str):
    """The mjax module of the same path, or None."""
    try:
        return importlib.import_module("m" + jax_name)
    except ImportError:
        return None


def compare(jax_name: str) -> tuple[list[str], list[str] | None]:
    """(JAX's public names, those the mjax module of the same path lacks; None when mjax
    lacks the module)."""
    theirs = importlib.import_module(jax_name)
    names = public_names(theirs)
    ours = mjax_module(jax_name)
    if ours is None:
        return names, None

    def present(n):
        if inspect.ismodule(getattr(theirs, n)):   # a submodule: present if it imports
            return mjax_module(getattr(theirs, n).__name__) is not None
        return hasattr(ours, n)
    return names, [n for n in names if not present(n)]


def _parent_missing(mod: str, missing_modules: set[str]) -> bool:
    parts = mod.split(".")
    return any(".".join(parts[:i]) in missing_modules for i in range(1, len(parts)))


def survey() -> dict:
    """{"modules": [(module, names, missing or None)], "broken": [(module, error)],
    "unsupported": [(module, name, why)]}."""
    found, broken = _walk_jax_modules()
    modules = [(m, *compare(m)) for m in found]
    return {"modules": modules, "broken": list(broken),
            "unsupported": [u for m, names, miss in modules if miss is not None
                            for u in unsupported(m, names)]}


def unsupported(jax_name: str, names) -> list[tuple[str, str, str]]:
    """Names the mjax module has only to raise NotImplementedError: objects marked with a
    `mjax_unsupported` string saying what is missing."""
    ours = mjax_module(jax_name)
    out = []
    for n in names:
        why = getattr(getattr(ours, n, None), "mjax_unsupported", None)
        if isinstance(why, str):
            out.append((jax_name, n, why))
    return out


def unexplained(data: dict | None = None) -> list[str]:
    """Missing modules and names with no reason (what the coverage test refuses)."""
    data = data or survey()
    out = []
    for mod, names, missing in data["modules"]:
        if missing is None:
            if reason_for(mod) is None:
                out.append(mod)
            continue
        out += [f"{mod}.{n}" for n in missing if reason_for(f"{mod}.{n}") is None]
    return out


def unused_reasons(data: dict | None = None) -> list[str]:
    """REASONS entries that explain no missing module or name (stale: mjax has it now).
    An entry for a module that did not import here (JAX's optional dependency missing:
    tensorflow, tensorstore, ...), or for something inside one, cannot be checked, and is
    not counted stale."""
    data = data or survey()
    broken = [m for m, _ in data.get("broken", ())]

    def unchecked(k: str) -> bool:
        path = k[:-3] if k.endswith(".**") else k
        return any(path == b or path.startswith(b + ".") for b in broken)
    missing = []
    for mod, names, miss in data["modules"]:
        missing += [mod] if miss is None else [f"{mod}.{n}" for n in miss]
    used = set()
    for name in missing:
        for k in REASONS:
            if k == name or (k.endswith(".**") and (name == k[:-3] or name.startswith(k[:-2]))) \
                    or (k.count(".") == name.count(".") and fnmatch.fnmatchcase(name, k)):
                used.add(k)
    return sorted(k for k in set(REASONS) - used if not unchecked(k))


def _grouped(items: list[str], qualify) -> list[str]:
    """One line per reason: the items sharing it, then the reason."""
    by_reason: dict[str, list[str]] = {}
    for n in items:
        by_reason.setdefault(reason_for(qualify(n)) or NO_REASON, []).append(n)
    return [f"- {', '.join(f'`{n}`' for n in group)}: {why}" for why, group in by_reason.items()]


def render(data: dict | None = None) -> str:
    import jax
    data = data or survey()
    missing_modules = {m for m, _, miss in data["modules"] if miss is None}
    rows, sections, lacked = [], [], []
    totals = [0, 0, 0, 0]
    for mod, names, missing in data["modules"]:
        if missing is None:
            if not _parent_missing(mod, missing_modules):
                lacked.append(mod)
            continue
        no_reason = [n for n in missing if reason_for(f"{mod}.{n}") is None]
        counts = [len(names), len(names) - len(missing), len(missing) - len(no_reason),
                  len(no_reason)]
        totals = [a + b for a, b in zip(totals, counts)]
        rows.append(f"| `{mod}` | " + " | ".join(map(str, counts)) + " |")
        if missing:
            sections.append("\n".join([f"### `{mod}` (`m{mod}`)", "",
                                       *_grouped(missing, lambda n: f"{mod}.{n}")]))
    lacked_lines = _grouped(lacked, lambda m: m)
    return "\n".join([
        "# Coverage of JAX's public API",
        "",
        "Generated by `python docs/gen_api_coverage.py` (never edit by hand; "
        "`test/test_api_coverage.py` checks it is up to date and that every missing module "
        "and name has a reason).",
        f"Compared with JAX {jax.__version__}: every public module under `jax.` that "
        "imports (`jax._src` excluded) and every public name in each, looked up on the mjax "
        "module of the same path (`jax.numpy.sum` -> `mjax.numpy.sum`). A name that exists "
        "is counted as present, whatever its completeness (signatures are compared by "
        "`test/frontend/test_signatures.py`); what is missing is listed with the reason "
        "from the script's `REASONS` table.",
        "",
        f"{len(data['modules'])} JAX modules: {len(data['modules']) - len(missing_modules)} "
        f"exist in mjax, {len(missing_modules)} do not (a module's submodules are counted "
        "with it below).",
        "",
        "## Modules mjax lacks",
        "",
        *lacked_lines,
        "",
        *(["JAX modules that do not import with this machine's packages (not compared):", "",
           *[f"- `{m}`: {err}" for m, err in data["broken"]], ""] if data["broken"] else []),
        "## Modules mjax has",
        "",
        "| module | JAX names | in mjax | missing, with reason | missing, no reason yet |",
        "|---|---|---|---|---|",
        *rows,
        "| all | " + " | ".join(map(str, totals)) + " |",
        "",
        "## Names mjax lacks, by module",
        "",
        *(s + "\n" for s in sections),
        *_unsupported_section(data.get("unsupported", ())),
    ])


def _unsupported_section(items) -> list[str]:
    """Names that exist (counted as present above) but raise NotImplementedError."""
    if not items:
        return []
    by_module: dict[str, list[tuple[str, str]]] = {}
    for mod, name, why in items:
        by_module.setdefault(mod, []).append((name, why))
    lines = ["## Names mjax has that raise NotImplementedError", "",
             "They exist so code naming them imports; calling one raises "
             "NotImplementedError saying what is missing (counted as present above).", ""]
    for mod, pairs in by_module.items():
        lines += [f"### `{mod}` (`m{mod}`)", ""]
        by_why: dict[str, list[str]] = {}
        for name, why in pairs:
            by_why.setdefault(why, []).append(name)
        lines += [f"- {', '.join(f'`{n}`' for n in names)}: {why}"
                  for why, names in by_why.items()]
        lines.append("")
    return lines


def main(argv=None) -> int:
    here = pathlib.Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(here / "api_coverage.md"))
    parser.add_argument("--list-modules", action="store_true",
                        help="print jax_modules() as JSON (what jax_modules() runs)")
    parser.add_argument("--survey", action="store_true", help="print survey() as JSON")
    args = parser.parse_args(argv)
    if args.list_modules:
        found, broken = _walk_jax_modules()
        print(json.dumps({"found": found, "broken": broken}))
        return 0
    if args.survey:
        print(json.dumps(survey(), default=list))
        return 0
    pathlib.Path(args.out).write_text(render())
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.exit(main())
