"""The test files fresh_process_files.py names run here, each in a child pytest
process of its own: their tests scan the whole heap (the tracer leak checkers walk every
object's referrers), which in a worker that has run a thousand tests costs minutes a
test. The child runs the same tier as its parent (MJAX_TEST_TIER) and collects the file
(MJAX_FRESH_CHILD=1)."""
import os

import pytest

from child_pytest import run_in_child
from fresh_process_files import FRESH_PROCESS_FILES


@pytest.mark.parametrize("path", FRESH_PROCESS_FILES)
def test_file_in_a_fresh_process(path):
    if os.environ.get("MJAX_TEST_TPU", "") not in ("", "0"):
        pytest.skip("TPU: the chip is this process's; test/run_on_tpu.sh runs these files "
                    "by path, which collects them directly")
    proc = run_in_child(f"test/{path}", "MJAX_FRESH_CHILD")
    assert " passed" in proc.stdout, proc.stdout[-2000:]
