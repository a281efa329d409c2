"""mjax in a process where jax cannot even be imported gives the results jax gives.

jaxlib changes behaviour once the jax package is imported (jax patches jaxlib's array
class), and most mjax users do not have jax: so the programs in without_jax_programs.py
run in a subprocess that blocks `import jax`, save their results, and are compared here
with jax's results for the same programs."""
from __future__ import annotations

import pathlib
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

import without_jax_programs as P

HERE = pathlib.Path(__file__).resolve().parent

CHILD = textwrap.dedent("""
    import sys
    class _NoJax:
        def find_spec(self, name, path=None, target=None):
            if name == "jax" or name.startswith("jax."):
                raise ImportError(f"{name} is blocked in this process")
    sys.meta_path.insert(0, _NoJax())
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import mjax
    import without_jax_programs as P
    out = {}
    for prog in P.PROGRAMS:
        for i, r in enumerate(prog(mjax)):
            out[f"{prog.__name__}/{i}"] = np.asarray(r)
    assert not any(m == "jax" or m.startswith("jax.") for m in sys.modules), "jax imported"
    np.savez(sys.argv[2], **out)
""")


@pytest.fixture(scope="module")
def mjax_results(tmp_path_factory):
    path = tmp_path_factory.mktemp("nojax") / "results.npz"
    proc = subprocess.run([sys.executable, "-c", CHILD, str(HERE), str(path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return dict(np.load(path))


@pytest.mark.parametrize("prog", P.PROGRAMS, ids=lambda p: p.__name__)
def test_same_results_as_jax(mjax_results, prog):
    theirs = prog(jax)
    for i, want in enumerate(theirs):
        got = mjax_results[f"{prog.__name__}/{i}"]
        want = np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype, (i, got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6, err_msg=f"result {i}")
