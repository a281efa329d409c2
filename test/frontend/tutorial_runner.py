"""Runs the code cells of a tutorial file (test/frontend/tutorials/*.py) as a notebook
would, with `jax` being either JAX or mjax, and writes what each cell printed as JSON.

    python tutorial_runner.py {jax,mjax} <cells.py> <out.json> [<prelude code>]

With `mjax`, `import jax` / `import jax.numpy as jnp` / `from jax import lax` resolve to
mjax's modules (mjax.alias_jax, the package's own alias), so the cells run unchanged, and real jax is blocked:
importing it would be a bug in mjax. A cell's output is its stdout/stderr text, then the
repr of its last expression (as IPython displays it), its warnings' categories and an
exception's type and first line. Notebook magics: `%timeit stmt` runs stmt once (its
timing is not compared), other magics are skipped."""
from __future__ import annotations

import ast
import contextlib
import faulthandler
import importlib
import io
import json
import re
import sys
import warnings


def cells_of(path):
    """[(header, code)] of a tutorial file."""
    text = open(path).read()
    parts = re.split(r"^# %% (.*)$", text, flags=re.M)
    return [(parts[i], parts[i + 1]) for i in range(1, len(parts), 2)]


def _unmagic(code: str) -> str:
    lines = code.split("\n")
    if lines and lines[0].startswith("%%"):
        lines = lines[1:]
    out = []
    for line in lines:
        s = line.strip()
        indent = line[:len(line) - len(line.lstrip())]
        if s.startswith("%timeit") or s.startswith("%time "):
            words = s.split()[1:]
            while words and words[0].startswith("-"):
                words = words[2:] if words[0] in ("-n", "-r") else words[1:]
            out.append(indent + "_ = " + " ".join(words))
        elif s.startswith("%") or s.startswith("!"):
            out.append(indent + "pass")
        else:
            out.append(line)
    return "\n".join(out)


def run_cell(code, ns, barrier):
    buf = io.StringIO()
    record = {"out": "", "warnings": [], "error": None}
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(buf), \
            contextlib.redirect_stderr(buf):
        warnings.simplefilter("always")
        try:
            tree = ast.parse(_unmagic(code))
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr) and \
                    not code.rstrip().endswith(";"):
                last = ast.Expression(tree.body.pop().value)
            exec(compile(tree, "<cell>", "exec"), ns)
            if last is not None:
                value = eval(compile(last, "<cell>", "eval"), ns)
                if value is not None:
                    print(repr(value))
            barrier()
        except BaseException as e:     # a cell that raises is part of the tutorial
            try:
                barrier()
            except BaseException:
                pass
            msg = str(e).strip().split("\n")[0]
            record["error"] = [type(e).__name__, msg, [c.__name__ for c in type(e).__mro__]]
    record["out"] = buf.getvalue()
    record["warnings"] = sorted({w.category.__name__ for w in caught})
    return record


def main(mode, path, out_path, prelude=""):
    # A crash (a signal, not an exception) prints every thread's Python stack on the
    # process's stderr, which test_tutorials shows when the run fails.
    faulthandler.enable(file=sys.__stderr__, all_threads=True)
    if mode == "mjax":
        importlib.import_module("mjax").alias_jax()   # (jax mode never imports mjax)
    ns = {"__name__": "__main__"}
    import jax
    barrier = getattr(jax, "effects_barrier", lambda: None)
    if prelude:
        exec(prelude, ns)
    fresh = dict(ns)
    results = []
    for header, code in cells_of(path):
        if "new-namespace" in header:   # (a cell of another page: the prelude's names only)
            ns.clear()
            ns.update(fresh)
        if "skip-execution" in header or "remove-cell" in header and "%" in code:
            results.append(None)
            continue
        results.append(run_cell(code, ns, barrier))
    if mode == "mjax":
        real = [m.__name__ for m in list(sys.modules.values())
                if getattr(m, "__name__", "").split(".")[0] == "jax"]
        assert not real, f"real jax was imported: {real[:5]}"
    with open(out_path, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:])
