"""Runs the code cells of JAX's Pallas guides (read from a directory at run time, never
stored in this repository) cell by cell, with `jax` resolved to mjax or, with --jax, to
real JAX, and reports each guide's cells: passed, failed (first error), skipped.

    python benchmarks/pallas_tpu_guides.py GUIDE_DIR [--jax] [--out FILE.json]
        [--timeout 90] [--deadline 225] [--only NAME ...] [--ignore-requirements]
        [--interpret] [--lower-tpu | --lower-only] [--skip GUIDE:INDEX ...]
    python benchmarks/pallas_tpu_guides.py GUIDE_DIR --list         # the cells, not run
    python benchmarks/pallas_tpu_guides.py --compare MJAX.json JAX.json
    python benchmarks/pallas_tpu_guides.py --compare-lowering JAX.json MJAX.json

GUIDE_DIR holds the guides (.md, .rst, searched recursively; a guide's name is its path
there without the suffix, e.g. tpu/matmul), e.g. copied from JAX's docs/pallas at the
tag of the release mjax follows. Which blocks are cells:
  - MyST notebooks (front matter `format_name: myst`): the {code-cell} blocks; a cell
    tagged skip-execution is not run, one tagged raises-exception must raise;
  - jupytext markdown (`format_name: markdown`): ```python blocks outside
    <!-- #region --> ... <!-- #endregion --> (the notebook's markdown cells);
  - other markdown: blocks of `>>>` examples, run as doctests (JAX's doctest namespace:
    jax, lax, jnp, np; JAX's flags NORMALIZE_WHITESPACE and NUMBER); a file without any
    is a sequence of ```python blocks, all run;
  - reStructuredText: `.. code-block:: python` / `.. code:: python` blocks and `>>>`
    blocks, after a prelude of the imports such snippets assume (RST_PRELUDE below).
In every format a block of `>>>` examples is a doctest cell.

Each guide runs in its own child process (`--child`), its cells in one namespace in
order, a failing cell not stopping the next. A cell whose top-level `assert` about the
machine fails (it names devices, cores or the TPU, as the multi-device guides' first cell
`assert num_devices > 1` does) marks the guide's requirement unmet: that cell and the rest
are reported as skipped with the assert's message and this machine's device count
(--ignore-requirements drops such asserts and goes on). A guide still running after its
timeout is killed; its cells so far are kept and the one running is reported as timed out.
Cell output goes to a log per guide (next to --out, else a temporary directory).
--interpret forces TPU interpret mode on every pallas_call (pltpu.set_tpu_interpret_mode),
so that off a TPU the kernels run too (slowly, at the guides' sizes). --lower-tpu also
lowers each kernel the cells call for the TPU, which needs no TPU, and lists those that
do not lower; --lower-only does that without running them (their calls return zeros),
and --compare-lowering then compares the Mosaic modules JAX and mjax made of each.
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import doctest
import json
import linecache
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback

# The names JAX's doctests get (its conftest.py) and that the .rst guides' snippets use
# without importing them; `dtype` is used undefined by one snippet (the hardware PRNG's).
DOCTEST_PRELUDE = "import jax\nfrom jax import lax\nimport jax.numpy as jnp\nimport numpy as np\n"
RST_PRELUDE = DOCTEST_PRELUDE + (
    "import functools\n"
    "from jax import random as jax_random\n"
    "from jax.experimental import pallas as pl\n"
    "from jax.experimental.pallas import tpu as pltpu\n"
    "dtype = jnp.float32\n")

# A top-level assert whose text names one of these checks the machine, not a result.
REQUIREMENT_WORDS = re.compile(
    r"\b(device_count|local_device_count|num_devices|devices|device_kind|get_tpu_info|"
    r"tpu_info|sc_info|sparse_core|num_cores|core_count|default_backend|platform)\b")


@dataclasses.dataclass
class Cell:
    index: int            # position among the guide's cells (0-based)
    line: int             # the guide's line (1-based) of the cell's first source line
    source: str
    kind: str = "code"    # "code" or "doctest"
    skip: str | None = None       # why it is not run
    expect_error: bool = False    # tagged raises-exception

    @property
    def first_line(self) -> str:
        for ln in self.source.splitlines():
            if ln.strip() and not ln.lstrip().startswith("#"):
                return ln.strip()[:120]
        return ""


# ---- extraction --------------------------------------------------------------------------
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")


def _fenced_blocks(lines):
    """(start line index of the content, info string, content lines, region) per fenced
    block; region is the jupytext region (`<!-- #region -->`) the block lies in, or None."""
    out, i, region = [], 0, None
    while i < len(lines):
        ln = lines[i]
        if re.match(r"^\s*<!--\s*#(region|md|raw)\b", ln):
            region = ln.strip()
        elif re.match(r"^\s*<!--\s*#end(region|md|raw)\b", ln):
            region = None
        m = FENCE.match(ln)
        if not m:
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3).strip()
        body, j = [], i + 1
        while j < len(lines):
            c = FENCE.match(lines[j])
            if c and c.group(2)[0] == fence[0] and len(c.group(2)) >= len(fence) \
                    and not c.group(3).strip():
                break
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
            j += 1
        out.append((i + 1, info, body, region))
        i = j + 1
    return out


def _front_matter(lines) -> str:
    if lines and lines[0].strip() == "---":
        for j in range(1, len(lines)):
            if lines[j].strip() == "---":
                return "\n".join(lines[1:j])
    return ""


def _tags(text: str) -> list[str]:
    """The tags of a cell's options (`:tags: [a, b]`, YAML `tags:` list, or jupytext's
    `tags=["a"]` in the fence's info string)."""
    tags = []
    for m in re.finditer(r"tags\s*[:=]\s*\[([^\]]*)\]", text):
        tags += [t.strip().strip("'\"") for t in m.group(1).split(",") if t.strip()]
    m = re.search(r"^\s*tags:\s*\n((?:\s*-\s*.+\n?)+)", text, re.M)
    if m:
        tags += [t.strip().lstrip("-").strip().strip("'\"") for t in m.group(1).splitlines()]
    return tags


def _myst_cell_body(body, start):
    """Strips a {code-cell}'s options (`:key: value` lines or a `---` YAML block); returns
    (options text, source lines, line index of the first source line)."""
    opts, k = [], 0
    if body and body[0].strip() == "---":
        for k in range(1, len(body)):
            if body[k].strip() == "---":
                opts, k = body[1:k], k + 1
                break
    else:
        while k < len(body) and re.match(r"^:[\w-]+:", body[k]):
            opts.append(body[k])
            k += 1
    while k < len(body) and not body[k].strip():
        k += 1
    return "\n".join(opts), body[k:], start + k


def _is_doctest(body) -> bool:
    first = next((ln for ln in body if ln.strip()), "")
    return first.lstrip().startswith(">>>")


def _markdown_cells(text):
    lines = text.splitlines()
    front = _front_matter(lines)
    fmt = re.search(r"format_name:\s*(\S+)", front)
    fmt = fmt.group(1) if fmt else "plain"
    blocks = _fenced_blocks(lines)
    has_doctests = any(_is_doctest(b) for _, _, b, _ in blocks)
    cells = []
    for start, info, body, region in blocks:
        if _is_doctest(body):
            cells.append(Cell(0, start + 1, "\n".join(body) + "\n", kind="doctest"))
            continue
        if fmt == "myst":
            if not info.startswith("{code-cell}"):
                continue
            opts, src, first = _myst_cell_body(body, start)
            tags = _tags(opts)
        elif fmt == "markdown":
            if not info.startswith("python") or region is not None:
                continue
            src, first, tags = body, start, _tags(info)
        else:
            if not info.startswith("python") or has_doctests:
                continue        # (a file with doctests tests those; its blocks illustrate)
            src, first, tags = body, start, []
        cells.append(Cell(0, first + 1, "\n".join(src) + "\n",
                          skip="tagged skip-execution" if "skip-execution" in tags else None,
                          expect_error="raises-exception" in tags))
    return cells


RST_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+(code-block|code|sourcecode|testcode|doctest|"
                           r"ipython)::\s*(\w*)\s*$")


def _rst_cells(text):
    lines = text.splitlines()
    cells, i = [], 0
    while i < len(lines):
        m = RST_DIRECTIVE.match(lines[i])
        is_para_doctest = lines[i].lstrip().startswith(">>>") and (
            i == 0 or not lines[i - 1].strip())
        if m and m.group(3) in ("", "python", "python3", "ipython3", "pycon") or \
                (m and m.group(2) == "doctest"):
            base = len(m.group(1))
            j = i + 1
            while j < len(lines) and re.match(r"^\s+:[\w-]+:", lines[j]):
                j += 1          # (the directive's options)
            body, first = [], None
            while j < len(lines):
                ln = lines[j]
                if ln.strip() and len(ln) - len(ln.lstrip()) <= base:
                    break
                if first is None and ln.strip():
                    first = j
                if first is not None:
                    body.append(ln)
                j += 1
            src = textwrap.dedent("\n".join(body)).rstrip() + "\n"
            if first is not None:
                cells.append(Cell(0, first + 1, src,
                                  kind="doctest" if _is_doctest(src.splitlines()) else "code"))
            i = j
        elif is_para_doctest:     # a doctest block: a paragraph of >>> examples
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            cells.append(Cell(0, i + 1, textwrap.dedent("\n".join(lines[i:j])) + "\n",
                              kind="doctest"))
            i = j
        else:
            i += 1
    return cells


def extract_cells(path: str) -> list[Cell]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    cells = _rst_cells(text) if path.endswith(".rst") else _markdown_cells(text)
    for k, c in enumerate(cells):
        c.index = k
    return cells


def prelude_for(path: str, cells) -> str:
    if path.endswith(".rst"):
        return RST_PRELUDE
    return DOCTEST_PRELUDE if any(c.kind == "doctest" for c in cells) else ""


def find_guides(root: str) -> list[tuple[str, str]]:
    """(name, path) of the guides under root, in name order."""
    found = []
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith((".md", ".rst")):
                p = os.path.join(d, f)
                found.append((os.path.splitext(os.path.relpath(p, root))[0], p))
    return sorted(found)


# ---- the child: one guide --------------------------------------------------------------------
class _NumberChecker(doctest.OutputChecker):
    """doctest's checker plus pytest's NUMBER: a float in the expected output matches one
    that agrees to the digits written."""
    FLOAT = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?")

    def check_output(self, want, got, optionflags):
        if super().check_output(want, got, optionflags):
            return True
        ws, gs = list(self.FLOAT.finditer(want)), list(self.FLOAT.finditer(got))
        if not ws or len(ws) != len(gs):
            return False
        parts, last = [], 0
        for w, g in zip(ws, gs):
            frac = w.group().split("e")[0].split("E")[0]
            digits = len(frac.split(".")[1]) if "." in frac else 0
            exp = re.search(r"[eE]([-+]?\d+)", w.group())
            tol = 0.5 * 10 ** (-digits + (int(exp.group(1)) if exp else 0))
            if abs(float(w.group()) - float(g.group())) > tol * 1.0000001:
                return False
            parts += [got[last:g.start()], w.group()]
            last = g.end()
        return super().check_output(want, "".join(parts) + got[last:], optionflags)


class _Runner(doctest.DocTestRunner):
    """Keeps the first failure of a doctest cell as (type, message, example line)."""

    def __init__(self):
        super().__init__(checker=_NumberChecker(), verbose=False,
                         optionflags=doctest.NORMALIZE_WHITESPACE)
        self.first = None

    def report_failure(self, out, test, example, got):
        if self.first is None:
            self.first = ("DoctestMismatch",
                          f"expected {example.want.strip()[:400]!r}, got {got.strip()[:400]!r}",
                          example.lineno, None)
        super().report_failure(out, test, example, got)

    def report_unexpected_exception(self, out, test, example, exc_info):
        if self.first is None:
            self.first = (type(exc_info[1]).__name__, str(exc_info[1]), example.lineno,
                          exc_info)
        super().report_unexpected_exception(out, test, example, exc_info)


class RequirementUnmet(Exception):
    pass


def _innermost(tb, filename=None):
    frames = traceback.extract_tb(tb)
    if filename is not None:
        frames = [f for f in frames if f.filename == filename]
    return frames[-1] if frames else None


def _error(exc, filename, cell):
    """What the report says of an exception raised by a cell."""
    where = _innermost(exc.__traceback__, filename)
    deepest = _innermost(exc.__traceback__)
    msg = str(exc)
    return {"type": type(exc).__name__, "message": msg[:4000],
            "bases": [c.__name__ for c in type(exc).__mro__[1:-2]],
            "first_message_line": next((m for m in msg.splitlines() if m.strip()), "")[:300],
            "cell_line": where.lineno if where else None,
            "guide_line": cell.line + where.lineno - 1 if where else None,
            "source_line": (where.line or "").strip() if where else None,
            "raised_at": f"{deepest.filename}:{deepest.lineno}" if deepest else None}


def _requirement(exc, filename):
    """The failed top-level assert's text if it checks the machine, else None."""
    if not isinstance(exc, AssertionError):
        return None
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames or frames[-1].filename != filename:
        return None             # (an assert inside a called function checks a result)
    line = (frames[-1].line or "").strip()
    if line.startswith("assert") and REQUIREMENT_WORDS.search(line):
        return str(exc) or line
    return None


def _without_requirement_asserts(src):
    tree = ast.parse(src)
    tree.body = [s for s in tree.body if not (
        isinstance(s, ast.Assert) and REQUIREMENT_WORDS.search(ast.unparse(s.test)))]
    return tree


def _machine(jax):
    try:
        devs = jax.devices()
        return {"backend": jax.default_backend(), "device_count": len(devs),
                "device_kind": getattr(devs[0], "device_kind", "?")}
    except Exception as e:  # (reported, not fatal: the cells may say more)
        return {"error": f"{type(e).__name__}: {e}"}


class _TpuLoweringCheck:
    """Wraps pl.pallas_call so that each kernel the cells call (not those they pass
    interpret=) is first lowered for the TPU, interpret mode off, from its operands'
    shapes: on a machine without a TPU that is as far as a kernel's compilation for the
    chip goes (JAX lowers its Pallas TPU kernels to Mosaic there, mjax runs
    --jaxpr-pallas-to-mosaic). The call then runs as it would have."""

    def __init__(self, jax, interpret, only, guide, dump_dir):
        from jax.experimental import pallas as pl
        from jax.experimental.pallas import tpu as pltpu
        self.jax, self.pl, self.pltpu, self.interpret = jax, pl, pltpu, interpret
        self.only = only      # (the calls return zeros of their out_shape, never run)
        self.guide, self.dump_dir = guide, dump_dir   # (where lowered modules are kept)
        self.original = pl.pallas_call
        self.seen, self.records = set(), []
        pl.pallas_call = self.pallas_call

    def pallas_call(self, kernel, *args, **kwargs):
        f = self.original(kernel, *args, **kwargs)
        if kwargs.get("interpret"):
            return f
        name = getattr(getattr(kernel, "func", kernel), "__name__", repr(kernel))

        # (one check per kernel, call parameters and operand shapes: a cell that times a
        # kernel calls it many times; addresses in reprs of index maps are dropped)
        fn = getattr(kernel, "func", kernel)
        code = getattr(fn, "__code__", None)
        params = re.sub(r" at 0x[0-9a-f]+", "", repr((kernel, args, sorted(kwargs.items())))) \
            + (f" {code.co_filename}:{code.co_firstlineno}" if code else "")

        def call(*operands):
            self.check(lambda: self.original(kernel, *args, **kwargs), name, params,
                       operands)
            if self.only:
                return self.zeros(kwargs.get("out_shape", args[0] if args else None))
            return f(*operands)
        return call

    def zeros(self, out_shape):
        import jax.numpy as jnp
        return self.jax.tree_util.tree_map(
            lambda s: jnp.zeros(s.shape, s.dtype) if hasattr(s, "shape") else s, out_shape)

    def check(self, make, name, params, operands):
        jax = self.jax

        def spec(x):
            if hasattr(x, "shape") and hasattr(x, "dtype"):
                return jax.ShapeDtypeStruct(x.shape, x.dtype)
            return x
        specs = jax.tree_util.tree_map(spec, operands)
        key = (name, params, repr(specs))
        if key in self.seen:
            return
        self.seen.add(key)
        rec = {"kernel": name, "operands": repr(specs)[:300], "ok": True}
        # (JAX reads the forcing when pallas_call is called: a new one, made unforced)
        self.pltpu.set_tpu_interpret_mode(None)
        try:
            low = jax.jit(make()).trace(*specs).lower(lowering_platforms=("tpu",))
            if self.dump_dir:
                os.makedirs(self.dump_dir, exist_ok=True)
                fname = f"{self.guide.replace('/', '__')}-{len(self.seen)}-{name}.mlir"
                with open(os.path.join(self.dump_dir, fname), "w") as f:
                    f.write(low.as_text())
                rec["lowered_file"] = os.path.join("lowered", fname)
        except Exception as e:  # (recorded: the report lists what did not lower)
            rec.update(ok=False, error=f"{type(e).__name__}: {e}"[:2000])
            print(f"(TPU lowering of {name} failed: {rec['error'][:500]})", flush=True)
        finally:
            if self.interpret:
                self.pltpu.set_tpu_interpret_mode()
        self.records.append(rec)

    def take(self):
        out, self.records = self.records, []
        return out


def run_child(path, name, args):
    import faulthandler
    faulthandler.enable()       # (a crash leaves the Python stack in the guide's log)
    if not args.jax:
        from mjax.jax_alias import alias_jax
        alias_jax()
    import jax
    if args.interpret:
        from jax.experimental.pallas import tpu as pltpu
        pltpu.set_tpu_interpret_mode()
    lowering = (_TpuLoweringCheck(jax, args.interpret, args.lower_only, name,
                                  os.path.join(os.path.dirname(args.result), "lowered"))
                if args.lower_tpu or args.lower_only else None)
    ignore_requirements = args.ignore_requirements
    result_path = args.result
    cells = extract_cells(path)
    result = {"guide": name, "library": "jax" if args.jax else "mjax",
              "machine": _machine(jax), "interpret": args.interpret,
              "lower_tpu": args.lower_tpu, "cells": [], "running": None}

    def save():
        tmp = result_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, result_path)

    ns = {"__name__": "__main__", "__file__": path}
    prelude = prelude_for(path, cells)
    if prelude:
        exec(compile(prelude, f"<{name} prelude>", "exec"), ns)
    unmet = None
    for cell in cells:
        rec = {"index": cell.index, "line": cell.line, "kind": cell.kind,
               "first_line": cell.first_line, "status": None, "seconds": 0.0}
        result["cells"].append(rec)
        if f"{name}:{cell.index}" in args.skip:
            cell.skip = "--skip"
        if cell.skip or unmet:
            rec["status"], rec["reason"] = "skipped", cell.skip or unmet
            continue
        result["running"] = cell.index
        save()
        print(f"\n===== {name} cell {cell.index} (line {cell.line}): {cell.first_line}",
              flush=True)
        filename = f"<{name} cell {cell.index}>"
        linecache.cache[filename] = (len(cell.source), None,
                                     cell.source.splitlines(True), filename)
        t0 = time.perf_counter()
        try:
            if cell.kind == "doctest":
                test = doctest.DocTestParser().get_doctest(cell.source, {}, filename,
                                                           filename, 0)
                test.globs = ns         # (get_doctest copies the namespace it is given)
                runner = _Runner()
                runner.run(test, clear_globs=False)
                if runner.first is not None:
                    typ, msg, lineno, exc_info = runner.first
                    raise _DoctestFailure(typ, msg, lineno, exc_info)
            else:
                try:
                    exec(compile(cell.source, filename, "exec"), ns)
                except AssertionError as e:
                    req = _requirement(e, filename)
                    if req is None:
                        raise
                    if not ignore_requirements:
                        raise RequirementUnmet(req) from e
                    print(f"(requirement unmet, ignored: {req})", flush=True)
                    rec["requirement_ignored"] = req
                    exec(compile(_without_requirement_asserts(cell.source), filename,
                                 "exec"), ns)
            ok = not cell.expect_error
            rec["status"] = "passed" if ok else "failed"
            if not ok:
                rec["error"] = {"type": "NoError", "message": "tagged raises-exception"}
        except RequirementUnmet as e:
            m = result["machine"]
            unmet = (f"requirement unmet ({e}) on {m.get('device_count')} "
                     f"{m.get('device_kind')} device(s), checked by cell {cell.index}")
            rec["status"], rec["reason"] = "skipped", unmet
        except _DoctestFailure as e:
            rec["status"] = "failed"
            rec["error"] = {"type": e.typ, "message": e.msg[:4000],
                            "first_message_line": next(
                                (m for m in e.msg.splitlines() if m.strip()), "")[:300],
                            "cell_line": e.lineno + 1, "guide_line": cell.line + e.lineno,
                            "source_line": cell.source.splitlines()[e.lineno].strip()}
            if e.exc_info:
                deepest = _innermost(e.exc_info[2])
                rec["error"]["raised_at"] = (f"{deepest.filename}:{deepest.lineno}"
                                             if deepest else None)
        except BaseException as e:  # noqa: B902 (a cell's SystemExit is its failure too)
            if isinstance(e, KeyboardInterrupt):
                raise
            if cell.expect_error:
                rec["status"] = "passed"
            else:
                rec["status"], rec["error"] = "failed", _error(e, filename, cell)
                traceback.print_exc()
        if lowering is not None:
            rec["tpu_lowering"] = lowering.take()
        rec["seconds"] = round(time.perf_counter() - t0, 3)
        print(f"===== {rec['status']} in {rec['seconds']} s", flush=True)
        result["running"] = None
        save()
    save()


class _DoctestFailure(Exception):
    def __init__(self, typ, msg, lineno, exc_info):
        super().__init__(msg)
        self.typ, self.msg, self.lineno, self.exc_info = typ, msg, lineno, exc_info


# ---- the parent ----------------------------------------------------------------------------
def run_guide(name, path, args, log_dir):
    res_path = os.path.join(log_dir, name.replace("/", "__") + ".json")
    log_path = os.path.join(log_dir, name.replace("/", "__") + ".log")
    if os.path.exists(res_path):
        os.remove(res_path)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", path, "--name", name,
           "--result", res_path] + (["--jax"] if args.jax else []) + \
          (["--ignore-requirements"] if args.ignore_requirements else []) + \
          (["--interpret"] if args.interpret else []) + \
          (["--lower-tpu"] if args.lower_tpu else []) + \
          (["--lower-only"] if args.lower_only else []) + \
          (["--skip", *args.skip] if args.skip else [])
    timeout = args.timeout
    if args.deadline:
        left = args.deadline - (time.time() - args.started)
        timeout = min(timeout, left)
        if left < 15:        # (too little left to start a process on the chip)
            return {"guide": name, "cells": [
                {"index": c.index, "line": c.line, "kind": c.kind,
                 "first_line": c.first_line, "status": "not run",
                 "reason": f"--deadline {args.deadline:.0f} s reached"}
                for c in extract_cells(path)], "returncode": None, "timed_out": False,
                "seconds": 0.0}
    t0 = time.time()
    timed_out = False
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)   # (the child's own session only)
            rc = proc.wait()
    res = {"guide": name, "cells": []}
    if os.path.exists(res_path):
        with open(res_path) as f:
            res = json.load(f)
    running = res.pop("running", None)
    if running is not None:
        rec = res["cells"][running]
        rec["status"] = "timeout" if timed_out else "crashed"
        rec["error"] = {"type": "Timeout" if timed_out else "Crash",
                        "message": f"guide killed after {timeout:.0f} s" if timed_out
                        else f"child exited with {rc}"}
        rec["first_message_line"] = rec["error"]["message"]
    # cells never reached (a timeout or a crash) are listed as not run
    total = extract_cells(path)
    for c in total[len(res["cells"]):]:
        res["cells"].append({"index": c.index, "line": c.line, "kind": c.kind,
                             "first_line": c.first_line, "status": "not run",
                             "reason": "timeout" if timed_out else f"child exited with {rc}"})
    res.update(returncode=rc, timed_out=timed_out, seconds=round(time.time() - t0, 1),
               log=log_path)
    if rc != 0 and not res["cells"]:
        with open(log_path) as f:
            res["child_error"] = f.read()[-3000:]
    return res


def summarize(res) -> dict:
    counts = {}
    for c in res["cells"]:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    return counts


def print_guide(res, out=sys.stdout):
    counts = summarize(res)
    run = sum(v for k, v in counts.items() if k in ("passed", "failed", "timeout", "crashed"))
    m = res.get("machine", {})
    print(f"{res['guide']}: {len(res['cells'])} cells, run {run}, passed "
          f"{counts.get('passed', 0)}, failed {counts.get('failed', 0)}, skipped "
          f"{counts.get('skipped', 0)}" +
          "".join(f", {k} {v}" for k, v in counts.items()
                  if k not in ("passed", "failed", "skipped")) +
          f" ({res.get('seconds', '?')} s; {m.get('device_count', '?')} "
          f"{m.get('device_kind', m.get('error', '?'))})", file=out)
    reasons = []
    for c in res["cells"]:
        if c["status"] in ("failed", "timeout", "crashed"):
            e = c.get("error", {})
            where = f" [guide line {e['guide_line']}: {e.get('source_line')}]" \
                if e.get("guide_line") else ""
            print(f"  cell {c['index']} (line {c['line']}) {c['first_line']!r}: "
                  f"{e.get('type')}: {e.get('first_message_line', e.get('message', ''))}"
                  f"{where}", file=out)
        elif c["status"] in ("skipped", "not run") and c.get("reason") not in reasons:
            reasons.append(c.get("reason"))
            print(f"  {c['status']} from cell {c['index']}: {c.get('reason')}", file=out)
    lowered = [k for c in res["cells"] for k in c.get("tpu_lowering", [])]
    if lowered:
        bad = [k for k in lowered if not k["ok"]]
        print(f"  TPU lowering: {len(lowered)} kernels, {len(lowered) - len(bad)} lowered"
              + "".join(f"\n    {k['kernel']} {k['operands'][:120]}: "
                        f"{k['error'].splitlines()[0][:300]}" for k in bad), file=out)
    if res.get("child_error"):
        print("  child failed:\n" + textwrap.indent(res["child_error"][-1500:], "    "),
              file=out)


def compare(a_path, b_path):
    with open(a_path) as f:
        a = json.load(f)
    with open(b_path) as f:
        b = json.load(f)
    print(f"{a.get('library')} ({a_path}) vs {b.get('library')} ({b_path}); cells whose "
          f"status or error type differs:")
    for name in sorted(set(a["guides"]) | set(b["guides"])):
        ca = {c["index"]: c for c in a["guides"].get(name, {}).get("cells", [])}
        cb = {c["index"]: c for c in b["guides"].get(name, {}).get("cells", [])}
        for k in sorted(set(ca) | set(cb)):
            sa = ca.get(k, {}).get("status", "-")
            sb = cb.get(k, {}).get("status", "-")
            ea = ca.get(k, {}).get("error", {})
            eb = cb.get(k, {}).get("error", {})
            same_error = (ea.get("type") == eb.get("type")
                          or ea.get("type") in eb.get("bases", ())
                          or eb.get("type") in ea.get("bases", ()))
            if sa != sb or not same_error:
                c = ca.get(k) or cb.get(k)
                print(f"  {name} cell {k} (line {c['line']}) {c['first_line']!r}: "
                      f"{sa} vs {sb}" + (" (other errors)" if sa == sb else ""))
                for lib, e in ((a.get("library"), ea), (b.get("library"), eb)):
                    if e:
                        print(f"    {lib}: {e.get('type')}: "
                              f"{e.get('first_message_line', e.get('message', ''))}")


def compare_lowering(a_path, b_path):
    """Decodes the Mosaic module of each kernel both runs lowered (--lower-tpu) and
    compares them (benchmarks/mosaic_on_tpu.py's decoding and comparison)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from mosaic_on_tpu import compare as compare_modules, decode_all
    reports = []
    for p in (a_path, b_path):
        with open(p) as f:
            reports.append((json.load(f), os.path.splitext(p)[0] + "_logs"))
    (a, a_dir), (b, b_dir) = reports
    print(f"Mosaic modules, {a.get('library')} against {b.get('library')}:")
    counts = {}
    for name in sorted(set(a["guides"]) & set(b["guides"])):
        cells_b = {c["index"]: c for c in b["guides"][name]["cells"]}
        for ca in a["guides"][name]["cells"]:
            cb = cells_b.get(ca["index"], {})
            for ka, kb in zip(ca.get("tpu_lowering", []), cb.get("tpu_lowering", [])):
                label = f"{name} cell {ca['index']} {ka['kernel']}"
                if not (ka.get("lowered_file") and kb.get("lowered_file")):
                    what = "not lowered by " + " and ".join(
                        lib for lib, k in ((a.get("library"), ka), (b.get("library"), kb))
                        if not k.get("lowered_file"))
                else:
                    with open(os.path.join(a_dir, ka["lowered_file"])) as f:
                        ma = decode_all(f.read())
                    with open(os.path.join(b_dir, kb["lowered_file"])) as f:
                        mb = decode_all(f.read())
                    if len(ma) != len(mb):
                        what = f"{len(ma)} against {len(mb)} kernels"
                    else:
                        what = "; ".join(compare_modules(x, y) for x, y in zip(ma, mb)) \
                            or "no tpu_custom_call"
                counts[what.split(" [")[0].split(":")[0]] = counts.get(
                    what.split(" [")[0].split(":")[0], 0) + 1
                print(f"  {label}: {what}")
    print("  " + ", ".join(f"{k}: {v}" for k, v in counts.items()))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("guide_dir", nargs="?")
    p.add_argument("--jax", action="store_true", help="run with real JAX, not mjax")
    p.add_argument("--out", help="write the results as JSON (logs go beside it)")
    p.add_argument("--timeout", type=float, default=90.0, help="seconds per guide")
    p.add_argument("--deadline", type=float, default=0.0,
                   help="seconds for all guides (each gets at most what is left)")
    p.add_argument("--only", nargs="*", default=None,
                   help="guide names (or parts of names), run in this order")
    p.add_argument("--ignore-requirements", action="store_true",
                   help="drop the guides' asserts about the machine and go on")
    p.add_argument("--interpret", action="store_true",
                   help="every pallas_call in TPU interpret mode (pltpu.set_tpu_interpret_mode;"
                        " kernels then run on the CPU)")
    p.add_argument("--lower-tpu", action="store_true",
                   help="also lower each kernel called for the TPU (works without one) "
                        "and report those that do not lower")
    p.add_argument("--lower-only", action="store_true",
                   help="--lower-tpu, and the kernels' calls return zeros instead of "
                        "running (every kernel of a guide is lowered quickly; the cells' "
                        "checks of values then fail)")
    p.add_argument("--skip", nargs="*", default=[], metavar="GUIDE:INDEX",
                   help="cells not to run, e.g. tpu/matmul:13 (XLA's 8192^3 matmuls, "
                        "timed 100 times, take too long on a CPU)")
    p.add_argument("--list", action="store_true", help="print the cells, run nothing")
    p.add_argument("--compare", nargs=2, metavar=("A.json", "B.json"))
    p.add_argument("--compare-lowering", nargs=2, metavar=("JAX.json", "MJAX.json"),
                   help="compare the Mosaic modules of two --lower-tpu runs")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--name", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        run_child(args.child, args.name, args)
        return 0
    if args.compare:
        compare(*args.compare)
        return 0
    if args.compare_lowering:
        compare_lowering(*args.compare_lowering)
        return 0
    if not args.guide_dir:
        p.error("give the directory of the guides")
    guides = find_guides(args.guide_dir)
    if args.only:       # (in the order given: an exact name, else every name containing it)
        chosen = []
        for o in args.only:
            exact = [g for g in guides if g[0] == o]
            chosen += [g for g in exact or [g for g in guides if o in g[0]] if g not in chosen]
        guides = chosen
    if not guides:
        p.error(f"no guides (.md, .rst) under {args.guide_dir}")
    if args.list:
        for name, path in guides:
            cells = extract_cells(path)
            print(f"{name}: {len(cells)} cells"
                  + (" (prelude: " + prelude_for(path, cells).replace("\n", "; ") + ")"
                     if prelude_for(path, cells) else ""))
            for c in cells:
                print(f"  [{c.index}] line {c.line} {c.kind}"
                      + (f" (not run: {c.skip})" if c.skip else "")
                      + (" (must raise)" if c.expect_error else "") + f": {c.first_line}")
        return 0
    args.started = time.time()
    lib = "jax" if args.jax else "mjax"
    if args.out:
        log_dir = os.path.splitext(args.out)[0] + "_logs"
        os.makedirs(log_dir, exist_ok=True)
    else:
        log_dir = tempfile.mkdtemp(prefix=f"guides_{lib}_")
    report = {"library": lib, "interpret": args.interpret,
              "guide_dir": os.path.abspath(args.guide_dir), "guides": {}}
    print(f"{lib}{' (interpret)' if args.interpret else ''}: {len(guides)} guides from "
          f"{args.guide_dir}, at most {args.timeout:.0f} s each"
          + (f", {args.deadline:.0f} s in all" if args.deadline else ""), flush=True)
    for name, path in guides:
        res = run_guide(name, path, args, log_dir)
        report["guides"][name] = res
        print_guide(res)
        sys.stdout.flush()
        if args.out:
            with open(args.out, "w") as f:
                json.dump(report, f, indent=1)
    totals = {}
    for res in report["guides"].values():
        for k, v in summarize(res).items():
            totals[k] = totals.get(k, 0) + v
    report["totals"] = totals
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    print(f"{lib}, all guides: " + ", ".join(f"{k} {v}" for k, v in sorted(totals.items()))
          + f" ({time.time() - args.started:.0f} s; logs in {log_dir})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
