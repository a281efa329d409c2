"""Fuzzes `mjax-opt` with mutated IR: whatever the input, the driver exits 0, or 1 with
an `error:` line; never a signal, a traceback, an internal error (exit 2) or a hang.

Two tiers of the same fuzzer (ir_fuzz.py): the fast one runs here (a few hundred
inputs); the long one is

    MJAX_FUZZ_LONG=1 python -m pytest -q -p no:xdist test/passes/test_opt_fuzz.py
    python test/passes/ir_fuzz.py --count 5000 --jobs 2 --seed 1     # or any seed

(docs/fuzzing.md). MJAX_FUZZ_SEED picks the mutation seed."""
from __future__ import annotations

import contextlib
import io
import os
import random
import re
import signal
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mjax.passes import opt

import ir_fuzz
from ir_fuzz import Case, make_cases, mutate, run_cases

LONG = os.environ.get("MJAX_FUZZ_LONG", "") not in ("", "0")
SEED = int(os.environ.get("MJAX_FUZZ_SEED", "0"))
SEEDS = ir_fuzz.lit_seeds()

FLAGS = [
    [],
    ["--jaxpr-to-stablehlo"],
    ["--jaxpr-to-stablehlo", "--canonicalize", "--cse"],
    ["--split-input-file", "--verify-diagnostics"],
    ["--pass-pipeline=builtin.module(jaxpr-verify,jaxpr-to-stablehlo,canonicalize,cse)"],
    ["--no-verify-each", "--jaxpr-verify", "--jaxpr-to-stablehlo"],
]


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang("mjax-opt ran for more than 20 seconds")


def run_in_process(text: str, flags: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old_stdin, old_handler = sys.stdin, signal.signal(signal.SIGALRM, _alarm)
    sys.stdin = io.StringIO(text)
    signal.alarm(20)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = opt.run(["-", *flags])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old_handler)
        sys.stdin = old_stdin
    return code, out.getvalue(), err.getvalue()


def check_outcome(code: int, err: str, text: str, flags) -> None:
    context = f"flags {flags}, input:\n{text}\nstderr:\n{err}"
    assert "Traceback" not in err, context
    assert "internal error" not in err, context
    assert code in (0, 1), f"exit {code}; {context}"
    if code == 1:
        assert re.search(r"^(<stdin>(:\d+(:\d+)?)?|mjax-opt): error: ", err, re.M), context


def test_seeds_exist():
    assert len(SEEDS) > 100, f"only {len(SEEDS)} seed chunks found under {ir_fuzz.ROOT}"


# In this process, with shrinking: token edits of lit chunks.
@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**9), which=st.integers(0, 10**6),
       n=st.integers(1, 4), flags=st.sampled_from(FLAGS))
def test_mutated_ir_never_crashes_the_driver(seed, which, n, flags):
    text = mutate(SEEDS[which % len(SEEDS)], random.Random(seed), n)
    code, _, err = run_in_process(text, flags)
    check_outcome(code, err, text, flags)


# In worker processes (a crash names its input): structural and token edits of lit
# chunks and traced programs, through every pass mix.
def test_mutated_ir_in_workers():
    count, jobs = (5000, 2) if LONG else (300, 1)
    seeds = ir_fuzz.seeds(traced=True)
    assert sum(origin == "traced" for origin, _ in seeds) >= 30
    result = run_cases(make_cases(seeds, count, SEED), timeout=30, jobs=jobs)
    assert result.inputs == count
    assert not result.findings, (
        f"{len(result.findings)} of {count} mutated inputs (seed {SEED}) crashed, "
        f"raised or hung mjax-opt: {dict(result.counts())}\n"
        + "\n".join(f.report() for f in result.findings[:5]))


def test_workers_name_the_input_that_crashes_or_hangs():
    # The harness itself: a worker killed by a signal, and one stuck in a case, are
    # findings at that input; the cases after them still run.
    ok = Case('func.func @f() {\n  return\n}\n', [], "ok")
    crash = Case(ir_fuzz.CRASH_FOR_TESTS, [], "crash")
    hang = Case(ir_fuzz.HANG_FOR_TESTS, [], "hang")
    result = run_cases([ok, crash, ok, hang, ok], timeout=2)
    assert [(f.kind, f.case.origin, f.alone) for f in result.findings] == [
        ("signal", "crash", "signal"), ("hang", "hang", "")]
