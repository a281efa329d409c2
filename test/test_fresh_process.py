"""The test files fresh_process_files.py names run here, each in a child pytest
process of its own: their tests scan the whole heap (the tracer leak checkers walk every
object's referrers), which in a worker that has run a thousand tests costs minutes a
test. The child runs the same tier as its parent (MJAX_TEST_TIER) and collects the file
(MJAX_FRESH_CHILD=1)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fresh_process_files import FRESH_PROCESS_FILES

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("path", FRESH_PROCESS_FILES)
def test_file_in_a_fresh_process(path):
    if os.environ.get("MJAX_TEST_TPU", "") not in ("", "0"):
        pytest.skip("TPU: the chip is this process's; test/run_on_tpu.sh runs these files "
                    "by path, which collects them directly")
    env = dict(os.environ, MJAX_FRESH_CHILD="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-rfE",
                           f"test/{path}"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout, proc.stdout[-2000:]
