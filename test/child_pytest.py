"""A test file run in a child pytest process of its own (test_tf_in_child.py,
test_fresh_process.py): the child collects it because `flag` is set in its
environment, runs the same tier as its parent, and must pass."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_in_child(path: str, flag: str) -> subprocess.CompletedProcess:
    """Runs `pytest path` (relative to the repository root) in a child process with
    `flag`=1; fails the calling test unless the child passed. Returns the process."""
    env = dict(os.environ, **{flag: "1"})
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-rfE",
                           path], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=1500)
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-3000:]
    return proc
