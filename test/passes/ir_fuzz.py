"""The IR fuzzer of `mjax-opt`: seeded mutations of `jaxpr` IR, each run through the main
pass mixes in worker subprocesses; a signal, a traceback or a hang is a finding.

Seeds are the lit inputs (test/**/*.mlir, one `// -----` chunk each) and the IR that
tracing gives for user programs (traced_programs.py). Mutations are token edits (types,
shapes, numbers, op names, punctuation) and structural ones (use before definition, an
operand renamed or two swapped, attributes dropped or changed, region terminators broken,
lines deleted, duplicated or swapped, truncation).

A worker (`python ir_fuzz.py --worker CASES.json START`) runs many cases in one process
and says which it starts before running it, so a crash or hang names its input; the
runner restarts a worker after it and reruns the input alone to confirm it.

    python test/passes/ir_fuzz.py --count 3000 --jobs 2      # the long tier
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import pathlib
import random
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field

ROOT = pathlib.Path(__file__).resolve().parents[1]
_SPLIT = re.compile(r"^// -----.*$", re.M)

# What mjax-opt runs each input through (each list is one command line).
PASS_MIXES = [
    [],
    ["--jaxpr-verify"],
    ["--jaxpr-to-stablehlo"],
    ["--jaxpr-to-stablehlo", "--canonicalize", "--cse"],
    ["--jaxpr-expand-transforms", "--jaxpr-to-stablehlo"],
    ["--jaxpr-expand-transforms", "--jaxpr-inline", "--jaxpr-dce", "--jaxpr-cse",
     "--jaxpr-to-stablehlo"],
    ["--jaxpr-inline", "--jaxpr-dce", "--jaxpr-cse"],
    ["--jaxpr-jvp"],
    ["--jaxpr-vjp"],
    ["--jaxpr-batch"],
    ["--jaxpr-checkify"],
    ["--jaxpr-propagate-shardings"],
    ["--jaxpr-propagate-shardings=explain=true materialize=true"],
    ["--jaxpr-discharge-state"],
    ["--jaxpr-pallas-interpret=platform=cpu"],
    # The compile pipeline (frontend/tracing/lowering.py), verifying only its input.
    ["--no-verify-each", "--jaxpr-expand-transforms", "--jaxpr-pallas-interpret",
     "--jaxpr-inline", "--jaxpr-dce", "--jaxpr-to-stablehlo", "--canonicalize", "--cse",
     "--symbol-dce"],
    ["--split-input-file", "--verify-diagnostics"],
    ["--pass-pipeline=builtin.module(jaxpr-verify,jaxpr-to-stablehlo,canonicalize,cse)"],
]


# ---- seeds ---------------------------------------------------------------------------
def lit_seeds() -> list[str]:
    """One chunk per seed (each keeps its CHECK comments): chunks with jaxpr ops."""
    files = sorted(p for p in ROOT.rglob("*.mlir") if "Output" not in p.parts)
    return [c for p in files for c in _SPLIT.split(p.read_text()) if '"jaxpr.' in c]


def traced_seeds() -> list[str]:
    from traced_programs import traced_texts   # (imports the frontend: only when asked)
    return [text for _, text in traced_texts()]


# ---- mutations -----------------------------------------------------------------------
TOKEN = re.compile(r"\s+|[(){}\[\]<>,:=\"]|[^\s(){}\[\]<>,:=\"]+")
ELEMENT_TYPES = ["f32", "f64", "bf16", "f16", "i1", "i8", "i32", "i64", "ui8", "ui32",
                 "complex<f32>", "!jaxpr.key<threefry2x32>", "index", "none"]
NUMBERS = ["0", "1", "-1", "2", "3", "7", "-5", "64", "4294967296", "99999999999999999999",
           "1.5", "nan", "0x7FC00000"]
OP_NAMES = ["jaxpr.add", "jaxpr.sin", "jaxpr.select_n", "jaxpr.dot_general",
            "jaxpr.constant", "jaxpr.iota", "jaxpr.pad", "jaxpr.foo", "jaxpr.concatenate",
            "jaxpr.convert_element_type", "jaxpr.reshape", "jaxpr.cond", "jaxpr.while",
            "jaxpr.scan", "jaxpr.yield", "jaxpr.call", "jaxpr.jvp", "jaxpr.vjp",
            "jaxpr.vmap", "jaxpr.checkify", "jaxpr.check", "jaxpr.reduce",
            "jaxpr.custom_vjp_call", "jaxpr.custom_jvp_call", "jaxpr.checkpoint",
            "jaxpr.sharding_constraint", "jaxpr.gather", "jaxpr.scatter_add",
            "jaxpr.reduce_window", "jaxpr.sort", "jaxpr.psum", "jaxpr.random_bits",
            "jaxpr.pure_callback", "jaxpr.get", "jaxpr.swap", "jaxpr.pallas_call",
            "func.return", "func.call", "stablehlo.add", "foo.bar"]


def mutate(text: str, rng: random.Random, n: int) -> str:
    """`n` token edits: drop, swap, duplicate, retype, reshape, renumber, rename an op,
    insert stray punctuation."""
    tokens = TOKEN.findall(text)
    for _ in range(n):
        words = [i for i, t in enumerate(tokens) if not t.isspace()]
        if not words:
            break
        i = rng.choice(words)
        kind = rng.randrange(8)
        if kind == 0:  # drop a token
            tokens[i] = ""
        elif kind == 1:  # swap two tokens
            j = rng.choice(words)
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif kind == 2:  # duplicate a token
            tokens[i] = tokens[i] + " " + tokens[i]
        elif kind == 3:  # change an element type
            types = [k for k in words if re.fullmatch(r"(\d+x)*(f|i|ui|bf)\d+", tokens[k])]
            if types:
                k = rng.choice(types)
                tokens[k] = re.sub(r"(f|i|ui|bf)\d+$", rng.choice(ELEMENT_TYPES), tokens[k])
        elif kind == 4:  # change a shape
            shapes = [k for k in words if re.fullmatch(r"(\d+x)+\w+", tokens[k])]
            if shapes:
                k = rng.choice(shapes)
                dims = tokens[k].split("x")
                d = rng.randrange(len(dims) - 1)
                choice = rng.choice(["0", "1", "2", "3", "5", "?", "", "1x1"])
                dims[d] = choice
                tokens[k] = "x".join(p for p in dims if p != "") if choice else "x".join(
                    dims[:d] + dims[d + 1:])
        elif kind == 5:  # change a number (attribute values, array elements, dims)
            nums = [k for k in words if re.fullmatch(r"-?\d+(\.\d+)?(e[-+]?\d+)?", tokens[k])]
            if nums:
                tokens[rng.choice(nums)] = rng.choice(NUMBERS)
        elif kind == 6:  # rename an op to a sibling or an unknown one
            ops = [k for k in words if tokens[k].startswith("jaxpr.")]
            if ops:
                tokens[rng.choice(ops)] = rng.choice(OP_NAMES)
        else:  # insert a stray punctuation token
            tokens[i] = tokens[i] + rng.choice(["(", ")", "{", "}", "<", ">", ",", ":", "%0",
                                                "[", "]", '"', "// -----\n"])
    return "".join(tokens)


_DEF = re.compile(r"^\s*(%[\w$.\-]+)(?::\d+)?(?:\s*,\s*%[\w$.\-]+)*\s*=")
_USE = re.compile(r"%[\w$.\-]+(?:#\d+)?")
_ATTR = re.compile(r"(\w+) = (array<[^>]*>|dense<[^>]*>|\"[^\"]*\"|@\w+|-?\d+ : i\d+|"
                   r"\[[^\]]*\]|true|false|[\w<>]+)")
_ATTR_VALUES = ["array<i64: 0>", "array<i64: 5, 1>", "array<i64>", "array<i64: -1>",
                "dense<1.0> : tensor<f32>", "dense<0> : tensor<2xi32>", '"x"', "@nowhere",
                "@main", "7 : i64", "-3 : i64", "0 : i32", "[]", '["d"]', "[array<i64>]",
                "true", "i32", "f32", "unit"]


def _uses(line: str) -> list[re.Match]:
    """The SSA uses on a line: names after a definition's `=`, not block arguments."""
    stripped = line.lstrip()
    if stripped.startswith(("^", "//", "func.func")):
        return []
    m = _DEF.match(line)
    start = m.end() if m else 0
    return [u for u in _USE.finditer(line)
            if u.start() >= start and line[u.end():u.end() + 1] != ":"]


def _region_lines(lines: list[str]) -> set[int]:
    """Lines inside region bodies (after a `^bb` header, before the region closes)."""
    inside, depth = set(), 0
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("^bb"):
            depth += 1
        elif s.startswith("}") and depth:
            depth -= 1
        elif depth:
            inside.add(i)
    return inside


def _defs(lines: list[str]) -> list[tuple[int, str]]:
    return [(i, m.group(1)) for i, line in enumerate(lines) if (m := _DEF.match(line))]


def mutate_structure(text: str, rng: random.Random) -> str:
    """One structural edit of a module's lines."""
    lines = text.split("\n")
    code = [i for i, line in enumerate(lines)
            if line.strip() and not line.lstrip().startswith("//")]
    if not code:
        return text
    region = _region_lines(lines)
    defs = _defs(lines)
    kinds = ["use_before_def", "use_before_def", "rename_operand", "swap_operands",
             "swap_names", "attribute", "terminator", "truncate", "delete_line",
             "duplicate_line", "swap_lines", "region_escape"]
    # Regions are where MLIR's verifier cannot help (jaxpr ops are unregistered): edit
    # their values more often.
    kind = rng.choice(["use_before_def", "region_escape", "swap_lines"] if region and
                      rng.random() < 0.4 else kinds)
    users = [i for i in code if _uses(lines[i])]
    if kind in ("use_before_def", "region_escape") and defs and users:
        # An operand renamed to a value defined later (in the same region when it can
        # be), or one defined outside the region that uses it.
        in_region = [i for i in users if i in region]
        i = rng.choice(in_region or users)
        if kind == "use_before_def":
            later = [d for d in defs if d[0] > i]
            near = [d for d in later if d[0] in region] if i in region else later
            choice = near or later
        else:
            choice = [d for d in defs if d[0] not in region and d[0] < i] or defs
        if choice:
            _, name = rng.choice(choice)
            u = rng.choice(_uses(lines[i]))
            lines[i] = lines[i][:u.start()] + name + lines[i][u.end():]
    elif kind == "rename_operand" and defs and users:
        i = rng.choice(users)
        u = rng.choice(_uses(lines[i]))
        lines[i] = lines[i][:u.start()] + rng.choice(defs)[1] + lines[i][u.end():]
    elif kind == "swap_operands":
        multi = [i for i in users if len(_uses(lines[i])) > 1]
        if multi:
            i = rng.choice(multi)
            a, b = rng.sample(_uses(lines[i]), 2)
            if a.start() > b.start():
                a, b = b, a
            line = lines[i]
            lines[i] = (line[:a.start()] + b.group() + line[a.end():b.start()] + a.group()
                        + line[b.end():])
    elif kind == "swap_names" and len(defs) > 1:
        (_, a), (_, b) = rng.sample(defs, 2)
        swap = {a: b, b: a}
        pattern = re.compile("(" + re.escape(a) + "|" + re.escape(b) + r")(?![\w$.\-])")
        lines = [pattern.sub(lambda m: swap[m.group(1)], line) for line in lines]
    elif kind == "attribute":
        with_attrs = [i for i in code if _ATTR.search(lines[i])]
        if with_attrs:
            i = rng.choice(with_attrs)
            m = rng.choice(list(_ATTR.finditer(lines[i])))
            how = rng.randrange(3)
            values = _ATTR_VALUES
            if m.group(2).startswith("@"):   # a callee: often another function here
                values = [f"@{n}" for n in re.findall(r"func\.func (?:private )?@(\w+)",
                                                       text)] or values
            new = ("" if how == 0 else f"{m.group(1)}x = {m.group(2)}" if how == 1
                   else f"{m.group(1)} = {rng.choice(values)}")
            lines[i] = lines[i][:m.start()] + new + lines[i][m.end():]
            lines[i] = re.sub(r"\{\s*,\s*|,\s*,", "{", lines[i]).replace(", }", "}")
    elif kind == "terminator":
        ends = [i for i in code if re.search(r'"jaxpr\.yield"|^\s*(func\.)?return\b',
                                             lines[i])]
        if ends:
            i = rng.choice(ends)
            how = rng.randrange(4)
            if how == 0:
                del lines[i]
            elif how == 1 and i > 0:
                lines[i - 1], lines[i] = lines[i], lines[i - 1]
            elif how == 2:
                lines[i] = (lines[i].replace('"jaxpr.yield"', '"func.return"')
                            if "jaxpr.yield" in lines[i]
                            else re.sub(r"return\b", '"jaxpr.yield"', lines[i], count=1))
            else:
                uses = _uses(lines[i])
                if uses:
                    u = rng.choice(uses)
                    lines[i] = lines[i][:u.start()] + lines[i][u.end():]
    elif kind == "truncate":
        cut = rng.randrange(len(text))
        return text[:cut]
    elif kind == "delete_line":
        del lines[rng.choice(code)]
    elif kind == "duplicate_line":
        i = rng.choice(code)
        lines.insert(i + rng.choice([0, 1, 2]), lines[i])
    elif kind == "swap_lines":
        i = rng.choice(sorted(region) if region and rng.random() < 0.5 else code)
        j = min(len(lines) - 1, i + rng.choice([1, 1, 2, 3]))
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def mutate_ir(text: str, rng: random.Random) -> str:
    """One to three edits, structural or token-level."""
    for _ in range(rng.choice([1, 1, 2, 3])):
        text = (mutate_structure(text, rng) if rng.random() < 0.6
                else mutate(text, rng, 1))
    return text


@dataclass
class Case:
    text: str
    flags: list[str]
    origin: str = ""


def make_cases(seeds: list[tuple[str, str]], count: int, seed: int) -> list[Case]:
    """`count` mutated inputs from `seeds` ((origin, text) pairs: "lit" or "traced"),
    each with a pass mix."""
    rng = random.Random(seed)
    groups = {}
    for origin, text in seeds:
        groups.setdefault(origin, []).append(text)
    cases = []
    for k in range(count):
        # A third from traced programs (fewer, larger, what users give), the rest lit.
        origin = "traced" if "traced" in groups and rng.random() < 1 / 3 else "lit"
        text = rng.choice(groups.get(origin) or [t for _, t in seeds])
        flags = rng.choice(PASS_MIXES)
        cases.append(Case(mutate_ir(text, rng), flags, f"{origin} #{k}"))
    return cases


# ---- the worker ------------------------------------------------------------------------
class _Hang(Exception):
    pass


def _out_of_time(signum, frame):
    raise _Hang()


# Inputs that make a worker crash or hang, to test the harness itself.
CRASH_FOR_TESTS = "// ir_fuzz: crash this worker\n"
HANG_FOR_TESTS = "// ir_fuzz: hang in this case\n"


def _run_one(text: str, flags: list[str], timeout: int) -> tuple[str, str]:
    """(outcome, detail) of one mjax-opt run in this process: outcome is ok, traceback,
    internal (exit 2 or an 'internal error' line), bad-exit or hang."""
    from mjax.passes import opt
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(text)
    # CPU time, not wall time: on a loaded machine a worker may wait long for a core.
    signal.setitimer(signal.ITIMER_PROF, timeout)
    try:
        if text == CRASH_FOR_TESTS:
            os.kill(os.getpid(), signal.SIGSEGV)
        elif text == HANG_FOR_TESTS:
            while True:
                pass
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = opt.run(["-", *flags])
    except _Hang:
        return "hang", f"used more than {timeout} s of CPU time"
    except BaseException:   # (SystemExit too: run() returns its status)
        return "traceback", traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        sys.stdin = old_stdin
    return classify(code, err.getvalue())


_LOCATED = re.compile(r"^\S[^\n]*?: error: ", re.M)


def classify(code: int, err: str) -> tuple[str, str]:
    if "Traceback" in err:
        return "traceback", err
    if code == 2 or "internal error" in err:
        return "internal", err
    if code == 0 or (code == 1 and _LOCATED.search(err)):
        return "ok", ""
    return "bad-exit", f"exit {code}; stderr:\n{err}"


def worker(cases_path: str, start: int, timeout: int) -> None:
    """Runs cases[start:], printing `S i` before and `R i <json>` after each."""
    signal.signal(signal.SIGPROF, _out_of_time)
    import mjax.passes.opt  # noqa: F401  (imported before the first case starts)
    cases = json.loads(pathlib.Path(cases_path).read_text())
    stdout = sys.stdout
    for i in range(start, len(cases)):
        print(f"S {i}", file=stdout, flush=True)
        outcome, detail = _run_one(cases[i]["text"], cases[i]["flags"], timeout)
        print(f"R {i} " + json.dumps([outcome, detail[-4000:]]), file=stdout, flush=True)


# ---- the runner ------------------------------------------------------------------------
@dataclass
class Finding:
    kind: str      # signal, traceback, internal, bad-exit, hang
    case: Case
    detail: str
    alone: str = ""   # after a crash or a killed worker: the input's outcome alone

    def report(self) -> str:
        return (f"--- {self.kind} ({self.case.origin}) flags {self.case.flags}"
                + (f" [alone: {self.alone}]" if self.alone else "")
                + f"\n{self.detail.strip()}\n--- input:\n{self.case.text}\n")


@dataclass
class Result:
    inputs: int = 0
    findings: list[Finding] = field(default_factory=list)

    def counts(self) -> Counter:
        return Counter(f.kind for f in self.findings)


def _spawn(path: str, start: int, timeout: int, stderr):
    env = dict(os.environ)
    env.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
    return subprocess.Popen(
        [sys.executable, "-X", "faulthandler", __file__, "--worker", path, str(start),
         str(timeout)], stdout=subprocess.PIPE, stderr=stderr, env=env,
        cwd=str(pathlib.Path(__file__).parent))


_KILLED = "worker killed"


def _drive(path: str, n: int, timeout: int, on_result) -> None:
    """Runs the n cases in `path` in a worker, and after a crash or a hang in a new one
    from the next case; on_result(i, outcome, detail) sees every case."""
    # The worker's CPU timer stops a hang in Python; this wall-clock limit, one stuck in
    # C++ or waiting (generous: a loaded machine starves workers).
    grace = 300 + 10 * timeout
    start = 0
    while start < n:
        stderr = tempfile.TemporaryFile()
        proc = _spawn(path, start, timeout, stderr)
        fd = proc.stdout.fileno()
        started, quiet_since, hung, pending = None, time.monotonic(), False, b""
        while True:
            ready, _, _ = select.select([fd], [], [], 5)
            if not ready:
                if time.monotonic() - quiet_since > grace:
                    # SIGABRT first: faulthandler prints where every thread is stuck.
                    proc.send_signal(signal.SIGABRT)
                    try:
                        proc.wait(30)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                    hung = True
                    break
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            quiet_since = time.monotonic()
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                kind, _, rest = line.decode().partition(" ")
                if kind == "S":
                    started = int(rest)
                elif kind == "R":
                    i, _, payload = rest.partition(" ")
                    on_result(int(i), *json.loads(payload))
                    started, start = None, int(i) + 1
        proc.wait()
        proc.stdout.close()
        stderr.seek(0)
        tail = stderr.read().decode(errors="replace")[-3000:]
        stderr.close()
        if hung and started is not None:
            on_result(started, "hang", f"{_KILLED} after {grace} s without an answer\n"
                                       f"{tail}")
        elif started is not None:       # the worker died inside a case
            rc = proc.returncode
            why = (f"worker killed by {signal.Signals(-rc).name}" if rc < 0
                   else f"worker exit {rc}")
            on_result(started, "signal" if rc < 0 else "internal", f"{why}\n{tail}")
        elif proc.returncode != 0 or start < n:
            raise RuntimeError(f"an ir_fuzz worker failed outside a case (exit "
                               f"{proc.returncode}):\n{tail}")
        if started is not None:
            start = started + 1


def run_cases(cases: list[Case], *, timeout: int = 30, jobs: int = 1) -> Result:
    """Runs every case (in `jobs` workers at once); a crash or hang is rerun alone."""
    result = Result(inputs=len(cases))
    shards = [cases[j::jobs] for j in range(jobs)]
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for j, shard in enumerate(shards):
            path = os.path.join(tmp, f"cases{j}.json")
            pathlib.Path(path).write_text(json.dumps(
                [{"text": c.text, "flags": c.flags} for c in shard]))
            paths.append(path)

        def drive(j):
            def on_result(i, outcome, detail):
                if outcome != "ok":
                    result.findings.append(Finding(outcome, shards[j][i], detail))
            _drive(paths[j], len(shards[j]), timeout, on_result)

        if jobs == 1:
            drive(0)
        else:
            import threading
            threads = [threading.Thread(target=drive, args=(j,)) for j in range(jobs)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        for f in result.findings:
            if f.kind == "signal" or f.detail.startswith(_KILLED):
                f.alone = _alone(f.case, tmp, timeout)
    return result


def _alone(case: Case, tmp: str, timeout: int) -> str:
    path = os.path.join(tmp, "alone.json")
    pathlib.Path(path).write_text(json.dumps([{"text": case.text, "flags": case.flags}]))
    seen = []
    _drive(path, 1, timeout, lambda i, outcome, detail: seen.append(outcome))
    return seen[0] if seen else "?"


def seeds(traced: bool = True) -> list[tuple[str, str]]:
    out = [("lit", text) for text in lit_seeds()]
    if traced:
        out += [("traced", text) for text in traced_seeds()]
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=3000, help="mutated inputs (default 3000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=2, help="workers at once")
    p.add_argument("--timeout", type=int, default=30, help="seconds per input")
    p.add_argument("--no-traced", action="store_true", help="lit seeds only")
    args = p.parse_args(argv)
    t0 = time.monotonic()
    all_seeds = seeds(traced=not args.no_traced)
    cases = make_cases(all_seeds, args.count, args.seed)
    result = run_cases(cases, timeout=args.timeout, jobs=args.jobs)
    for f in result.findings:
        print(f.report())
    counts = dict(result.counts())
    print(f"ir_fuzz: {result.inputs} inputs from {len(all_seeds)} seeds (seed "
          f"{args.seed}), {len(result.findings)} findings {counts or ''} in "
          f"{time.monotonic() - t0:.0f} s")
    return 1 if result.findings else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        sys.path.insert(0, str(pathlib.Path(__file__).parent))
        worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.path.insert(0, str(pathlib.Path(__file__).parent))
        sys.exit(main())
