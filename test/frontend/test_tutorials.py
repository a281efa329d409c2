"""JAX's own tutorials run unchanged with `import jax` resolving to mjax, and print what
JAX prints.

Each tutorial's code cells (test/frontend/tutorials/<name>.py, extracted from the jax-ml/jax
docs) run twice, in fresh processes, by tutorial_runner.py: once with real jax (the oracle)
and once with mjax standing in for every `jax` import (real jax blocked in that process).
Per cell we compare what it printed (numbers within float tolerance, object addresses
ignored), the categories of its warnings, and the class of any exception it raised (JAX's
class must be the class mjax raised or one of its bases).

Cells in KNOWN differ for reasons written next to them; every other cell must match."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "tutorial_runner.py")

# The buffer-donation page's snippets assume these names.
DONATION_PRELUDE = "import jax\nimport numpy as np\nfrom typing import List\nfrom jax import Array\n"

# matplotlib is not installed: a stand-in whose plotting calls print the shape, mean and
# standard deviation of the arrays plotted (so the pictures are compared too), and
# scipy.datasets.face (a download) a fixed random image of the face's shape.
PLOT_PRELUDE = '''
import sys as _sys, types as _types, numpy as _np

class _Plot:
    def __init__(self, name="plt"):
        self._name = name
    def __call__(self, *args, **kwargs):
        for a in args:
            if hasattr(a, "__array__") or isinstance(a, (list, tuple)):
                v = _np.asarray(a, dtype=float)
                print(f"[{self._name}: shape {v.shape} mean {v.mean():.5g} std {v.std():.5g}]")
        return _Plot(self._name)
    def __getattr__(self, name):
        return _Plot(name)
    def __getitem__(self, i):
        return _Plot(self._name)
    def __iter__(self):
        return iter([_Plot(self._name), _Plot(self._name)])
    def __repr__(self):
        return "<plot>"

def _subplots(nrows=1, ncols=1, **kwargs):
    axes = _np.empty(nrows * ncols, dtype=object)
    for i in range(axes.size):
        axes[i] = _Plot("ax")
    shape = tuple(n for n in (nrows, ncols) if n > 1)
    return _Plot("fig"), (axes.reshape(shape) if shape else axes[0])

_mpl = _types.ModuleType("matplotlib")
_mpl.__getattr__ = lambda name: _Plot(name)
_plt = _types.ModuleType("matplotlib.pyplot")
_plt.__getattr__ = lambda name: _subplots if name == "subplots" else _Plot(name)
_mpl.pyplot = _plt
_sys.modules.update({"matplotlib": _mpl, "matplotlib.pyplot": _plt})

import scipy.datasets as _datasets
_datasets.face = lambda gray=False: _np.random.default_rng(0).integers(
    0, 256, (768, 1024) if gray else (768, 1024, 3)).astype(_np.uint8)
'''

# For pages drawing from NumPy's global random state without seeding it.
SEED_PRELUDE = "import numpy as _np\n_np.random.seed(0)\n"

# (tutorial, cell index) -> why mjax's output differs from JAX's.
KNOWN = {
    ("key_concepts", 4): "make_jaxpr: JAX 0.10.2's jnp.where (and clip) is a nested "
                         "jit[name=_where] taking the Python scalar as a weak i32 operand; "
                         "mjax stages select_n inline. Not mimicked: which jnp functions JAX "
                         "wraps is an implementation detail that changes between versions, "
                         "and under grad JAX keeps their derivatives as nested jits too, "
                         "which mjax's expansion inlines (the compiled program is the same)",
    ("thinking_in_jax", 4): "type(x) is mjax.arrays.array.Array, not jaxlib._jax.ArrayImpl: naming "
                            "mjax's class so would make pickle resolve mjax arrays to "
                            "jaxlib's own ArrayImpl",
    ("vmapped_log_probs", 5): "the cell prints the ValueError's text, which in mjax also "
                              "names the user's line (' (at <cell>:6:52)')",
    ("autodiff_remat", 3): "the runner compiles every cell as '<cell>', and mjax finds the "
                           "Python function of a residual's position by (file, line, "
                           "column): g's line 3 in one cell and f2's line 3 in the next "
                           "collide (distinct files, as IPython's cells are, do not)",
    ("autodidax", 44): "the page's cell that lowers to XLA with JAX internals fails on JAX "
                       "0.10.2 itself (a TypeError from register_dialects); mjax has no "
                       "jax._src.xla_bridge (an ImportError)",
    ("print_breakpoint", 11): "jdb reads EOF (no stdin) and quits inside the callback: "
                              "both print a traceback of their own internal frames",
}

TUTORIALS = {
    "tracing": SEED_PRELUDE,
    "custom_interpreters": "",
    "autodidax": "",
    "type_promotion_jep": "",
    "distributed_data_loading": "",
    "autodidax2_part1": "",
    "debugging": "",
    "external_callbacks": "",
    "gradient_checkpointing": "",
    "buffer_donation": DONATION_PRELUDE,
    "jaxpr": "",
    "stateful_computations": "",
    "pytrees": "",
    "automatic_vectorization": "",
    "jit_compilation": "",
    "advanced_autodiff": "",
    "control_flow": "",
    "random_numbers": "",
    "key_concepts": "",
    "thinking_in_jax": "",
    "autodiff_cookbook": "",
    "custom_derivative_rules": "",
    "common_gotchas": "",
    "convolutions": PLOT_PRELUDE,
    "vmapped_log_probs": PLOT_PRELUDE,
    "autodiff_remat": "",
    "arrays_101": "",
    "pytrees_101": SEED_PRELUDE,
    "random_101": "",
    "state_101": "",
    "transformations_101": "",
    "jit_201": "",
    "control_flow_201": "",
    "debugging_201": "",
    "callbacks_201": "",
    "aot_201": "",
    "default_dtypes": "",
    "type_promotion": "import jax\nimport jax.numpy as jnp\n",   # (the page assumes them)
    "faq": "",
    "complex_differentiation": "",
    "checkify_guide": "",
    "print_breakpoint": "",
    "rank_promotion_warning": "",
}

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def _shape_and_numbers(text: str):
    """(text with numbers replaced by '#' and whitespace runs collapsed, the numbers)."""
    text = re.sub(r"0x[0-9a-fA-F]+", "0x?", text)
    numbers = [float(m) for m in _NUMBER.findall(text)]
    # (whitespace is ignored: NumPy pads columns to the widest printed number)
    shape = re.sub(r"\s+", "", _NUMBER.sub("#", text))
    return shape, numbers


def outputs_match(mine: str, theirs: str) -> bool:
    s1, n1 = _shape_and_numbers(mine)
    s2, n2 = _shape_and_numbers(theirs)
    return s1 == s2 and len(n1) == len(n2) and np.allclose(n1, n2, rtol=2e-4, atol=1e-5,
                                                           equal_nan=True)


# Cells whose printed lines come in an order the page itself says may vary (callbacks
# from several devices): their lines are compared as a sorted list.
UNORDERED = {
    ("print_breakpoint", 3): "pmap's per-device debug.print lines (the page: 'x: 0.0 / x: 1.0 "
                             "OR x: 1.0 / x: 0.0')",
}


# Cells printing buffer addresses (decimal): each distinct address becomes its order of
# first appearance, so what is compared is which prints show the same buffer.
ADDRESSES = {("array_refs", 28): "x_ref's buffer before and after a jit updates it",
             ("custom_interpreters", 2): "the repr of a jaxpr's Vars shows their object ids",
             ("jit_201", 20): "the same cell as array_refs 28",
             ("jit_201", 11): "jax_explain_cache_misses names the function's id()"}


def _addresses_numbered(record):
    if record is None:
        return None
    seen: dict = {}
    out = re.sub(r"\b\d{9,}\b", lambda m: f"<buffer {seen.setdefault(m.group(), len(seen))}>",
                 record["out"])
    return {**record, "out": out}


def _lines_sorted(record):
    if record is None:
        return None
    return {**record, "out": "\n".join(sorted(record["out"].splitlines()))}


def cell_mismatch(mine, theirs) -> str | None:
    """Why an mjax cell record differs from jax's, or None."""
    if (mine is None) != (theirs is None):
        return "one side skipped the cell"
    if mine is None:
        return None
    if theirs["error"] is not None:
        if mine["error"] is None:
            return f"jax raised {theirs['error'][0]}: {theirs['error'][1]}; mjax did not"
        if theirs["error"][0] not in mine["error"][2]:
            return (f"jax raised {theirs['error'][0]}: {theirs['error'][1]}; mjax raised "
                    f"{mine['error'][0]}: {mine['error'][1]}")
    elif mine["error"] is not None:
        return f"mjax raised {mine['error'][0]}: {mine['error'][1]}"
    if not outputs_match(mine["out"], theirs["out"]):
        return f"printed\n{mine['out']}\njax printed\n{theirs['out']}"
    if mine["warnings"] != theirs["warnings"]:
        return f"warnings {mine['warnings']}, jax's {theirs['warnings']}"
    return None


# ---- the sharding pages ---------------------------------------------------------------
# (Each sets up its 8 (or 2) CPU devices itself, with jax_num_cpu_devices or XLA_FLAGS,
# before its first computation. docs/parallel.md is not run on its own: its cells are the
# first 36 of new_docs/201/sharding.md's.)
TUTORIALS.update({"sharding_201": "", "sharding_ad_301": "",
                  "shard_map": ""})
KNOWN.update({
    ("sharding_201", 38): "both compile the jit for the 8-device mesh, but JAX reports "
                          "its Format(Layout.AUTO) input shardings as "
                          "GSPMDSharding({replicated}), so the page's `output_formats == "
                          "arg_formats` assert fails there; mjax's are NamedShardings and "
                          "the assert holds",
    ("shard_map", 19): "check_vma's error text: JAX names its internal function "
                       "'_rem_singleton' where mjax names the user's '<lambda>'",
})


# ---- autodiff, AOT, export and refs pages ---------------------------------------------
# (Doctest pages run with the names JAX's doctest namespace provides.)
DOCTEST_PRELUDE = "import jax\nimport jax.numpy as jnp\nfrom jax import lax\nimport numpy as np\n"
TUTORIALS.update({"automatic_differentiation": "", "custom_jvp_vjp_301": "",
                  "vjp_objects_301": "", "custom_derivatives_301": "", "cookbook_301": "",
                  "array_refs": "", "refs_301": "", "aot": DOCTEST_PRELUDE,
                  "export": DOCTEST_PRELUDE, "shape_poly": DOCTEST_PRELUDE,
                  "compilation_cache": "", "remat_301": "",
                  "hijax_custom_derivatives": "", "hijax_types": "", "host_offloading": ""})
KNOWN.update({
    ("hijax_types", 5): "the cell prints JAX's TypeError for a jit returning a QArray built "
                        "from tracers, which names JAX's tracer class "
                        "(jax._src.interpreters.partial_eval.DynamicJaxprTracer); mjax raises "
                        "the same TypeError naming its own (mjax.tracing.tracer.Tracer)",
    ("array_refs", 2): "jnp.sin of a Ref inside jit: JAX's TypeError names its internal "
                       "tracer class (DynamicJaxprTracer), mjax's names the Ref",
    **{("export", i): "the cells define a new primitive with jax._src internals (core, "
                      "mlir lowering rules, jax._src.config)"
       for i in (31, 33, 34, 35, 36, 38, 40, 145, 146)},
})


# ---- remat, placement, precision, XLA-control and other 201/501 pages -----------------
# (remat_301 and layout need nothing more; shard_map_201 and placement_201 set up their 8
# CPU devices themselves.)
# (precision's snippets assume an `x` and an `f` of matrices.)
PRECISION_PRELUDE = DOCTEST_PRELUDE + "x = jnp.ones((4, 4))\ndef f(x): return jnp.dot(x, x)\n"
TUTORIALS.update({"shard_map_201": "", "placement_201": "", "precision_201": PRECISION_PRELUDE,
                  "controlling_xla_201": DOCTEST_PRELUDE, "custom_pytrees": "",
                  "jacobian_vector_products": "", "async_dispatch": DOCTEST_PRELUDE,
                  "transfer_guard_501": DOCTEST_PRELUDE, "migrate_pmap": "", "layout": ""})
KNOWN.update({
    ("shard_map_201", 19): KNOWN[("shard_map", 19)],
})
# (docs/new_docs/201/slow-compilation.md, which docs/debugging/slow_tracing_compilation.md
# repeats; the new_docs copies of the parallel, export, shape-polymorphism and
# compilation-cache pages repeat pages run above cell for cell, and docs/parallel.md is
# the first part of sharding_201; colocated_python: docs/notebooks/colocated-python.md;
# multi_process: docs/multi_process.md, which docs/new_docs/501/multiprocess.md repeats.)
TUTORIALS.update({"slow_compilation_201": "", "colocated_python": "", "multi_process": ""})
KNOWN.update({
    ("slow_compilation_201", 7): "jax_log_compiles' log: JAX's eager ops are jits of "
                                 "their own, so it also logs their traces and compiles "
                                 "(convert_element_type, broadcast_in_dim) and its "
                                 "lowering times, under its modules' logger names; mjax "
                                 "logs the user's jit",
})
TUTORIALS.update({"xla_metadata": "", "debugging_flags": "", "profiling": "",
                  "device_memory_profiling": "", "constants": ""})
KNOWN.update({
    ("xla_metadata", 3): "the HLO of grad through a custom_vjp: mjax's common-subexpression "
                         "pass computes sin(x) and cos(x) once each, JAX's HLO computes "
                         "each twice (sin.2 and sin.3); the tagged op and its attributes "
                         "agree",
})


# ---- JAX enhancement proposals with runnable code (docs/jep/) --------------------------
TUTORIALS.update({f"jep_{name}": "" for name in (
    "custom_derivatives", "custom_vjp_update", "jex", "new_remat_checkpoint", "omnistaging",
    "prng", "sequencing_effects", "shard_map", "shmap_transpose", "stateful_rng",
    "typed_keys")})


# ---- the Pallas pages -----------------------------------------------------------------
# (grid_blockspec's examples are doctests, run by JAX with jax, lax, jnp and np imported.)
TUTORIALS.update({"pallas_quickstart": "", "pallas_pipelining": "",
                  "pallas_grid_blockspec": "import jax\nfrom jax import lax\n"
                                           "import jax.numpy as jnp\nimport numpy as np\n"})


def run_both(name, prelude, tmp_path):
    return run_cells(os.path.join(HERE, "tutorials", f"{name}.py"), prelude, tmp_path, name)


def run_cells(cells, prelude, tmp_path, name):
    """(mjax's records, jax's records) of the cells file `cells`, each run in its own
    process by tutorial_runner.py."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    procs, paths = {}, {}
    for mode in ("jax", "mjax"):
        paths[mode] = str(tmp_path / f"{mode}.json")
        procs[mode] = subprocess.Popen([sys.executable, RUNNER, mode, cells, paths[mode],
                                        prelude], cwd=str(tmp_path), env=env,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       text=True)
    for mode, p in procs.items():
        out, _ = p.communicate(timeout=900)
        assert p.returncode == 0, f"the {mode} run of the {name} tutorial failed:\n{out[-4000:]}"
    return tuple(json.load(open(paths[m])) for m in ("mjax", "jax"))


@pytest.mark.parametrize("name", sorted(TUTORIALS))
def test_tutorial_matches_jax(name, tmp_path):
    mine, theirs = run_both(name, TUTORIALS[name], tmp_path)
    assert len(mine) == len(theirs)
    problems = []
    for i, (m, t) in enumerate(zip(mine, theirs)):
        if (name, i) in UNORDERED:
            m, t = _lines_sorted(m), _lines_sorted(t)
        if (name, i) in ADDRESSES:
            m, t = _addresses_numbered(m), _addresses_numbered(t)
        why = cell_mismatch(m, t)
        if (name, i) in KNOWN:
            if why is None:
                problems.append(f"cell {i} now matches jax: remove it from KNOWN")
            continue
        if why is not None:
            problems.append(f"cell {i}: {why}")
    assert not problems, f"{name}: {len(problems)} cells differ from jax:\n" + "\n\n".join(
        problems)


def test_comparison_is_strict():
    # The comparison itself can fail: other numbers, other text, other error classes.
    assert outputs_match("Array([1.0, 2.0], dtype=float32)", "Array([1.0,  2.0],  dtype=float32)")
    assert not outputs_match("Array([1.0, 2.5], dtype=float32)", "Array([1.0, 2.0], dtype=float32)")
    assert not outputs_match("{ lambda ; a:f32[]. let }", "{ lambda ; a:f32[3]. let }")
    assert not outputs_match("reduce_sum[axes=(0,)] c", "reduce_sum[axes=(0,) out_sharding=None] c")
    rec = {"out": "", "warnings": [], "error": ["TypeError", "m", ["TypeError", "Exception"]]}
    assert cell_mismatch(rec, {**rec, "error": ["ValueError", "m", []]}) is not None
    assert cell_mismatch(rec, rec) is None
    same = {**rec, "out": "94000000000001 a\n94000000000001 b\n"}
    other = {**rec, "out": "93000000000002 a\n93000000000002 b\n"}
    moved = {**rec, "out": "93000000000002 a\n93000000000003 b\n"}
    assert cell_mismatch(_addresses_numbered(same), _addresses_numbered(other)) is None
    assert cell_mismatch(_addresses_numbered(moved), _addresses_numbered(other)) is not None
