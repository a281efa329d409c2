"""Writes docs/numpy_coverage.md: which public names of JAX's modules mjax lacks, and why.

    python docs/gen_coverage.py            # rewrites docs/numpy_coverage.md
    python docs/gen_coverage.py --out P    # writes the page to P instead

Every public name (no leading underscore) of each JAX module below is looked up on the
mjax module of the same path. A missing name takes its reason from REASONS (keys are full
JAX names, or fnmatch patterns such as "jax.lax.*_p"); one without a reason is listed as
"missing (no reason yet)", which test/test_coverage_page.py refuses. The page is only ever
written by this script (the same test checks the committed page is up to date).
This script imports the real `jax` (installed as a test oracle); the mjax package never does.
"""
from __future__ import annotations

import argparse
import fnmatch
import importlib
import os
import pathlib
import sys

MODULES = ["jax.numpy", "jax.lax", "jax.numpy.linalg", "jax.numpy.fft", "jax.scipy.linalg",
           "jax.scipy.special", "jax.random", "jax.nn", "jax.tree_util", "jax"]

NOT_YET = "not implemented yet"
_PRIMITIVE = ("JAX's Primitive object: an mjax primitive is an op class of the jaxpr "
              "dialect (mjax.dialect.ops, e.g. AddOp for add_p), bound with mjax.core.bind")
_SPECIAL = (f"{NOT_YET} in mjax.scipy.special (lax has lgamma, digamma, polygamma, erf_inv; "
            "this one needs its own series/recurrence or a primitive mjax lacks)")
_SCIPY_LINALG = (f"{NOT_YET} in mjax.scipy.linalg (the basics, special matrices and expm "
                 "exist; this one needs its own algorithm)")
_NN = f"{NOT_YET} in mjax.nn"

REASONS = {
    # ---- jax.numpy
    "jax.numpy.int1": "ml_dtypes' 1-bit types are not exported: mjax.dtypes maps no MLIR "
                      "element type to them (int2/int4 and uint2/uint4 are exported)",
    "jax.numpy.uint1": "see jax.numpy.int1",
    "jax.numpy.float6_*": "ml_dtypes' float6 types are not exported: mjax.dtypes maps no "
                          "MLIR element type to them (the float8 and float4 types are)",
    # ---- jax.lax
    "jax.lax.*_p": _PRIMITIVE,
    "jax.random.*_p": _PRIMITIVE,
    "jax.lax.AccuracyMode": "the `accuracy=` control of transcendental ops (result "
                            "accuracy of exp, log, ...) is not supported",
    "jax.lax.Tolerance": "see jax.lax.AccuracyMode",
    "jax.lax.DotAlgorithm": "dot algorithms are not supported: `precision=` takes "
                            "lax.Precision values (or their strings) only",
    "jax.lax.DotAlgorithmPreset": "see jax.lax.DotAlgorithm",
    "jax.lax.ragged_*": f"{NOT_YET}: no ragged (grouped) jaxpr op",
    "jax.lax.RaggedDotDimensionNumbers": "see jax.lax.ragged_dot",
    "jax.lax.RandomAlgorithm": "XLA's stateful-looking RNG ops (rng_bit_generator, "
                               "rng_uniform) are not exposed; mjax.random uses threefry",
    "jax.lax.rng_*": "see jax.lax.RandomAlgorithm",
    "jax.lax.after_all": "XLA tokens are not exposed: mjax orders its effects (callbacks, "
                         "debug prints) itself",
    "jax.lax.create_token": "see jax.lax.after_all",
    "jax.lax.bessel_i0e": f"{NOT_YET}: no jaxpr op for it (CHLO has bessel_i1e; i0e would "
                          "be a series)",
    "jax.lax.bessel_i1e": "see jax.lax.bessel_i0e",
    "jax.lax.betainc": f"{NOT_YET}: the regularized incomplete beta function has no jaxpr op",
    "jax.lax.igamma": f"{NOT_YET}: the incomplete gamma functions have no jaxpr op",
    "jax.lax.igammac": "see jax.lax.igamma",
    "jax.lax.igamma_grad_a": "see jax.lax.igamma",
    "jax.lax.zeta": f"{NOT_YET}: the Hurwitz zeta function has no jaxpr op (CHLO has zeta; "
                    "polygamma exists)",
    "jax.lax.random_gamma_grad": "exists as mjax.random_gamma_grad (used by the gradient of "
                                 "mjax.random.gamma), not re-exported from mjax.lax",
    "jax.lax.composite": f"{NOT_YET}: stablehlo.composite regions are not emitted",
    "jax.lax.dce_sink": "internal JAX helper (keeps a value alive through dead-code "
                        "elimination); mjax's --jaxpr-dce has no such sink",
    "jax.lax.stage": "internal JAX staging helper without an mjax counterpart",
    "jax.lax.shape_as_value": "dynamic shapes are not supported (mjax shapes are static)",
    "jax.lax.platform_dependent": f"{NOT_YET}: lowering per platform is chosen once per "
                                  "backend, not inside a program",
    "jax.lax.pbroadcast": "varying-manual-axes types (shard_map's check_vma casts) are not "
                          "modelled; shard_map checks replication itself",
    "jax.lax.pcast": "see jax.lax.pbroadcast",
    "jax.lax.psend": f"{NOT_YET}: point-to-point send/recv between devices",
    "jax.lax.precv": "see jax.lax.psend",
    "jax.lax.scaled_dot": f"{NOT_YET}: block-scaled (microscaling) dot products",
    # ---- jax.scipy.linalg
    "jax.scipy.linalg.*": _SCIPY_LINALG,
    # ---- jax.scipy.special
    "jax.scipy.special.*": _SPECIAL,
    "jax.scipy.special.softmax": f"{NOT_YET} in mjax.scipy.special (mjax.nn.softmax exists)",
    "jax.scipy.special.log_softmax": f"{NOT_YET} in mjax.scipy.special (mjax.nn.log_softmax "
                                     "exists)",
    # ---- jax.nn
    "jax.nn.*": _NN,
    "jax.nn.initializers": f"{NOT_YET}: the jax.nn.initializers module (mjax.random has the "
                           "distributions it would draw from)",
    # ---- jax (top level)
    "jax.Device": "devices are jaxlib's device objects (mjax.devices()); the class is not "
                  "re-exported at the top level",
    "jax.NamedSharding": "lives in mjax.sharding (NamedSharding, PartitionSpec, P), not "
                         "re-exported at the top level",
    "jax.P": "see jax.NamedSharding",
    "jax.Shard": "see jax.NamedSharding (Array.addressable_shards is not implemented yet)",
    "jax.jacobian": f"{NOT_YET} as an alias (mjax.jacrev is the same function)",
    "jax.named_call": f"{NOT_YET} (mjax.named_scope names ops in the IR)",
    "jax.api_util": "JAX's internal module; mjax's internals differ (frontend/api.py)",
    "jax.interpreters": "JAX's tracing internals; mjax traces into the jaxpr MLIR dialect",
    "jax.lib": "JAX's jaxlib shim; mjax uses jaxlib directly (runtime/)",
    "jax.extend": "JAX's extension API over its internals; mjax's are the dialect and passes",
    "jax.ffi": f"{NOT_YET}: foreign function calls (XLA custom calls registered by users)",
    "jax.export": f"{NOT_YET}: serialized exports (the StableHLO text is available from "
                  "jit(f).lower(...).as_text())",
    "jax.image": f"{NOT_YET}: the jax.image module (resize, scale_and_translate)",
    "jax.monitoring": "JAX's event-monitoring hooks; mjax logs compiles through logging",
    "jax.typing": f"{NOT_YET}: ArrayLike/DTypeLike annotation aliases",
    "jax.stages": "stages live in mjax.stages; not re-exported at the top level",
    "jax.memory": "memory kinds (host offloading) are not modelled",
    "jax.custom_derivatives": "the module is not re-exported; mjax.custom_jvp and "
                              "mjax.custom_vjp are",
    "jax.custom_batching": f"{NOT_YET}: custom_vmap / sequential_vmap",
    "jax.custom_gradient": f"{NOT_YET} (mjax.custom_vjp covers the use)",
    "jax.checkpoint_policies": f"{NOT_YET}: remat policies (mjax.checkpoint saves nothing "
                               "but the inputs)",
    "jax.closure_convert": f"{NOT_YET}",
    "jax.linear_transpose": f"{NOT_YET} as a user API (the transpose rules exist, used by "
                            "--jaxpr-vjp)",
    "jax.smap": f"{NOT_YET}: the experimental single-axis shard_map",
    "jax.softmax_custom_jvp": "a deprecated JAX flag without effect in mjax",
    "jax.ensure_compile_time_eval": f"{NOT_YET}",
    "jax.clear_caches": f"{NOT_YET} as a top-level name",
    "jax.live_arrays": f"{NOT_YET}: buffers are not tracked globally",
    "jax.array_garbage_collection_guard": "see jax.live_arrays",
    "jax.copy_to_host_async": f"{NOT_YET}: transfers are synchronous",
    "jax.make_array_from_*": f"{NOT_YET}: global arrays are built with device_put of a "
                             "host array and a sharding",
    "jax.host_count": "deprecated JAX aliases; mjax has process_count/process_index",
    "jax.host_id": "see jax.host_count",
    "jax.host_ids": "see jax.host_count",
    "jax.process_indices": f"{NOT_YET} (mjax.process_count exists)",
    "jax.print_environment_info": f"{NOT_YET}",
    "jax.version": "mjax's version is mjax.__version__ / its package metadata",
    "jax.transfer_guard*": "transfer guards are not modelled (no implicit transfers are "
                           "refused)",
    "jax.check_tracer_leaks": "see mjax.checking_leaks (the context manager JAX also has)",
    "jax.allow_f16_reductions": "a JAX 0.10 config context without an mjax option yet",
    "jax.enable_custom_prng": "a deprecated JAX config context; mjax.random's typed keys "
                              "need no switch",
    "jax.jax2tf_associative_scan_reductions": "an option of jax2tf's "
                                             "non-native lowering; mjax's jax2tf is native",
    "jax.no_execution": "a JAX 0.10 debugging context (refuses execution) not modelled",
    "jax.no_tracing": "see jax.no_execution",
    "jax.thread_guard": "see jax.no_execution",
    "jax.make_user_context": "JAX's user-context config helper; mjax.config has no "
                             "user-defined contexts",
    "jax.remove_size_one_mesh_axis_from_type": "a sharding-in-types option; shardings are "
                                               "not part of mjax's types",
    "jax.auto_pcast": "see jax.remove_size_one_mesh_axis_from_type",
    "jax.Ref": f"{NOT_YET}: mutable array refs exist only inside Pallas kernels",
    "jax.*_ref": "see jax.Ref",
    "jax.ref": "see jax.Ref",
    "jax.freeze": "see jax.Ref",
    "jax.ds": "see jax.Ref (ds builds dynamic slices for indexing refs)",
}


def reason_for(name: str) -> str | None:
    """The reason a name is missing: its exact entry, else the longest matching pattern."""
    if name in REASONS:
        return REASONS[name]
    # (a pattern's `*` stays within one module: "jax.*_ref" does not match "jax.lax.x_ref")
    matches = [k for k in REASONS if any(c in k for c in "*?[") and
               k.count(".") == name.count(".") and fnmatch.fnmatchcase(name, k)]
    return REASONS[max(matches, key=len)] if matches else None


def public_names(module) -> list[str]:
    return sorted(n for n in dir(module) if not n.startswith("_"))


def compare(jax_name: str) -> tuple[list[str], list[str]]:
    """(JAX's public names, those the mjax module of the same path lacks)."""
    theirs = importlib.import_module(jax_name)
    ours = importlib.import_module("m" + jax_name)
    names = public_names(theirs)
    return names, [n for n in names if not hasattr(ours, n)]


def render() -> str:
    import jax
    rows, sections = [], []
    for mod in MODULES:
        names, missing = compare(mod)
        explained = {n: reason_for(f"{mod}.{n}") for n in missing}
        unexplained = [n for n in missing if explained[n] is None]
        rows.append(f"| `{mod}` | {len(names)} | {len(names) - len(missing)} | "
                    f"{len(missing) - len(unexplained)} | {len(unexplained)} |")
        lines = [f"## `{mod}` (`m{mod}`)", ""]
        if not missing:
            lines.append("Every public name exists.")
        # Names sharing a reason share a line (e.g. the primitives of jax.lax).
        by_reason: dict[str, list[str]] = {}
        for n in missing:
            by_reason.setdefault(explained[n] or "missing (no reason yet)", []).append(n)
        for why, group in by_reason.items():
            lines.append(f"- {', '.join(f'`{n}`' for n in group)}: {why}")
        sections.append("\n".join(lines))
    return "\n".join([
        "# Coverage of JAX's public names",
        "",
        "Generated by `python docs/gen_coverage.py` (never edit by hand; "
        "`test/test_coverage_page.py` checks it is up to date).",
        f"Compared with JAX {jax.__version__}: every public name of each module, looked up "
        "on the mjax module of the same path (`jax.numpy.sum` -> `mjax.numpy.sum`). A name "
        "that exists is counted as present, whatever its completeness; missing names are "
        "listed with the reason from the script's `REASONS` table.",
        "",
        "| module | JAX names | in mjax | missing, with reason | missing, no reason yet |",
        "|---|---|---|---|---|",
        *rows,
        "",
        *(s + "\n" for s in sections),
    ])


def unexplained() -> list[str]:
    """Missing names with no reason (what the coverage test refuses)."""
    out = []
    for mod in MODULES:
        out += [f"{mod}.{n}" for n in compare(mod)[1] if reason_for(f"{mod}.{n}") is None]
    return out


def main(argv=None) -> int:
    here = pathlib.Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(here / "numpy_coverage.md"))
    args = parser.parse_args(argv)
    pathlib.Path(args.out).write_text(render())
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.exit(main())
