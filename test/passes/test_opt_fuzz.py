"""Fuzzes `mjax-opt` with mutated copies of the lit files under test/: whatever the input,
the driver exits 0, or 1 with an `error:` line; never a traceback, an internal error
(exit 2) or a hang."""
from __future__ import annotations

import contextlib
import io
import pathlib
import random
import re
import signal
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mjax.passes import opt

ROOT = pathlib.Path(__file__).resolve().parents[1]
SEED_FILES = sorted(p for p in ROOT.rglob("*.mlir") if "Output" not in p.parts)
_SPLIT = re.compile(r"^// -----.*$", re.M)
# One chunk per seed keeps every example small; the chunk still has its CHECK comments.
SEEDS = [c for p in SEED_FILES for c in _SPLIT.split(p.read_text()) if '"jaxpr.' in c]

TOKEN = re.compile(r"\s+|[(){}\[\]<>,:=\"]|[^\s(){}\[\]<>,:=\"]+")
ELEMENT_TYPES = ["f32", "f64", "bf16", "f16", "i1", "i8", "i32", "i64", "ui8", "ui32",
                 "complex<f32>", "!jaxpr.key<threefry2x32>", "index", "none"]
NUMBERS = ["0", "1", "-1", "2", "3", "7", "-5", "64", "4294967296", "99999999999999999999",
           "1.5", "nan", "0x7FC00000"]
FLAGS = [
    [],
    ["--jaxpr-to-stablehlo"],
    ["--jaxpr-to-stablehlo", "--canonicalize", "--cse"],
    ["--split-input-file", "--verify-diagnostics"],
    ["--pass-pipeline=builtin.module(jaxpr-verify,jaxpr-to-stablehlo,canonicalize,cse)"],
    ["--no-verify-each", "--jaxpr-verify", "--jaxpr-to-stablehlo"],
]


def mutate(text: str, rng: random.Random, n: int) -> str:
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
                tokens[rng.choice(ops)] = rng.choice(
                    ["jaxpr.add", "jaxpr.sin", "jaxpr.select_n", "jaxpr.dot_general",
                     "jaxpr.constant", "jaxpr.iota", "jaxpr.pad", "jaxpr.foo",
                     "jaxpr.concatenate", "jaxpr.convert_element_type", "jaxpr.reshape"])
        else:  # insert a stray punctuation token
            tokens[i] = tokens[i] + rng.choice(["(", ")", "{", "}", "<", ">", ",", ":", "%0",
                                                "[", "]", '"', "// -----\n"])
    return "".join(tokens)


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
    assert len(SEEDS) > 100, f"only {len(SEEDS)} seed chunks found under {ROOT}"


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**9), which=st.integers(0, 10**6),
       n=st.integers(1, 4), flags=st.sampled_from(FLAGS))
def test_mutated_ir_never_crashes_the_driver(seed, which, n, flags):
    text = mutate(SEEDS[which % len(SEEDS)], random.Random(seed), n)
    code, _, err = run_in_process(text, flags)
    check_outcome(code, err, text, flags)


@pytest.mark.parametrize("seed", range(4))
def test_mutated_ir_subprocess(seed):
    rng = random.Random(seed)
    text = mutate(rng.choice(SEEDS), rng, 3)
    flags = FLAGS[seed % len(FLAGS)]
    proc = subprocess.run([sys.executable, "-m", "mjax.passes.opt", "-", *flags], input=text,
                          capture_output=True, text=True, timeout=120)
    check_outcome(proc.returncode, proc.stderr, text, flags)
