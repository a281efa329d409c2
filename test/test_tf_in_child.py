"""The TensorFlow tests (test/tf) run in a child pytest process of their own.

TensorFlow and jaxlib each carry their own LLVM and MLIR; loaded into one process they
crashed XLA compilations at random (a segfault inside `compile_and_load`, in tests that
never touch TensorFlow, once a worker had imported it to collect test/tf). So the xdist
workers never import TensorFlow: conftest.py leaves test/tf out of their collection and
this file runs each TensorFlow test file in a fresh process (`MJAX_TF_CHILD=1` lets that
process collect it). The child runs the same tier as its parent (MJAX_TEST_TIER).
"""
import importlib.util
import os

import pytest

from child_pytest import ROOT, run_in_child
TF_FILES = sorted(p.name for p in (ROOT / "test" / "tf").glob("test_*.py"))


@pytest.mark.parametrize("name", TF_FILES)
def test_tensorflow_file_in_a_child_process(name):
    # The TPU machine has no TensorFlow (nor keras), a test dependency: the files skip
    # there; elsewhere a missing TensorFlow fails them, as a missing dependency should.
    if os.environ.get("MJAX_TEST_TPU", "") not in ("", "0") and \
            importlib.util.find_spec("tensorflow") is None:
        pytest.skip("TPU: needs tensorflow, a test dependency not installed on the TPU "
                    "machine")
    run_in_child(f"test/tf/{name}", "MJAX_TF_CHILD")
