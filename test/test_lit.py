"""Runs every lit test (test/**/*.mlir, *.filecheck.py) as one pytest case each."""
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIT_FILES = sorted(p for p in (ROOT / "test").rglob("*")
                   if (p.suffix == ".mlir" or p.name.endswith(".filecheck.py"))
                   and "Output" not in p.parts)  # lit's scratch files (%t)


@pytest.mark.parametrize("path", LIT_FILES, ids=lambda p: str(p.relative_to(ROOT / "test")))
def test_lit(path):
    # pytest-xdist runs these in parallel; lit's timing file (.lit_test_times.txt) is one
    # file per suite that every run rewrites, so a reader can see a half-written one
    # and stop with "malformed timing data". Timings only order a whole-suite run.
    proc = subprocess.run([sys.executable, "-c", "from lit.main import main; main()", "-v",
                           "--skip-test-time-recording", str(path)], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
