"""jax2tf's shape-polymorphic conversion as JAX's README shows it: each example
(jax2tf_poly_cases.py) run with jax and with mjax in fresh processes gives results of the
same shapes and dtypes, or an error of JAX's class (mjax's class is JAX's or derives from
a class of that name)."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _run(lib):
    proc = subprocess.run([sys.executable, os.path.join(HERE, "jax2tf_poly_cases.py"), lib],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {r["case"]: r for r in map(json.loads, proc.stdout.strip().splitlines())}


def test_readme_polymorphic_examples_match_jax():
    mine, theirs = _run("mjax"), _run("jax")
    assert mine.keys() == theirs.keys()
    problems = []
    for name, t in theirs.items():
        m = mine[name]
        if "error" in t:
            if "error" not in m or t["error"][0] not in m["error"]:
                problems.append(f"{name}: jax raised {t['error'][0]}, mjax gave {m}")
        elif m != t:
            problems.append(f"{name}: jax gave {t['out']}, mjax gave {m}")
    assert not problems, "\n".join(problems)
