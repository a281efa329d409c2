"""JAX's own example programs (the `examples/` folder of a JAX source tree) run unmodified
on mjax (`python -m mjax`) and on JAX, one process each, their printed outputs compared.

    python benchmarks/jax_examples.py --examples PATH/TO/jax/examples [--only mnist]

The examples download MNIST; here `examples.datasets` (and the `datasets` module the SPMD
example imports) is replaced by synthetic data of MNIST's shapes and dtypes (a seeded
random image set, `--train`/`--test` images), and matplotlib by a stub that draws
nothing. Elapsed times in the output are masked; every other number must be equal, or is
reported with its largest relative difference. Examples whose packages are missing here
(dp_accounting, onnx), or that download their model (onnx2xla, unless --online), are
reported as skipped.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

EXAMPLES = ("mnist_classifier_fromscratch", "mnist_classifier", "mnist_vae",
            "spmd_mnist_classifier_fromscratch", "advi", "differentially_private_sgd",
            "onnx2xla")
NEEDS = {"differentially_private_sgd": "dp_accounting", "onnx2xla": "onnx"}
OFFLINE = {"onnx2xla": "it downloads its ONNX model from GitHub"}   # (no synthetic stand-in)

SYNTHETIC_DATASETS = '''"""MNIST's shapes and dtypes, made up (benchmarks/jax_examples.py)."""
import numpy as np

TRAIN, TEST = {train}, {test}


def _images(rng, n):
    return rng.random((n, 784), dtype=np.float32)


def _labels(rng, n):
    return np.eye(10, dtype=np.float32)[rng.integers(0, 10, n)]


def mnist(permute_train=False):
    rng = np.random.default_rng(0)
    train_images, train_labels = _images(rng, TRAIN), _labels(rng, TRAIN)
    test_images, test_labels = _images(rng, TEST), _labels(rng, TEST)
    if permute_train:
        perm = np.random.RandomState(0).permutation(TRAIN)
        train_images, train_labels = train_images[perm], train_labels[perm]
    return train_images, train_labels, test_images, test_labels
'''

MATPLOTLIB_STUB = '''"""A matplotlib that draws nothing (benchmarks/jax_examples.py)."""
import types


class _Anything:
    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __iter__(self):
        return iter((self, self))


def __getattr__(name):
    return _Anything()


pyplot = types.ModuleType("matplotlib.pyplot")
pyplot.__getattr__ = __getattr__
'''

_TIME = re.compile(r"\b(in |\()?\d+\.\d+ sec")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def workdir(examples: str, train: int, test: int) -> str:
    """A folder holding the examples, `examples/` as a package, synthetic datasets and the
    matplotlib stub."""
    root = tempfile.mkdtemp(prefix="jax-examples-")
    pkg = os.path.join(root, "examples")
    os.makedirs(os.path.join(root, "matplotlib"))
    os.makedirs(pkg)
    for name in EXAMPLES:
        src = os.path.join(examples, name + ".py")
        if os.path.exists(src):
            shutil.copy(src, root)
            shutil.copy(src, pkg)
    data = SYNTHETIC_DATASETS.format(train=train, test=test)
    for where in (root, pkg):
        with open(os.path.join(where, "datasets.py"), "w") as f:
            f.write(data)
    open(os.path.join(pkg, "__init__.py"), "w").close()
    with open(os.path.join(root, "matplotlib", "__init__.py"), "w") as f:
        f.write(MATPLOTLIB_STUB)
    with open(os.path.join(root, "matplotlib", "pyplot.py"), "w") as f:
        f.write("from matplotlib import __getattr__  # noqa: F401\n")
    return root


def run(root: str, name: str, lib: str, timeout: float) -> tuple[int, str, str, float]:
    """(exit code, standard output, standard error, seconds) of one example's run."""
    cmd = [sys.executable] + (["-m", "mjax"] if lib == "mjax" else []) + [name + ".py"]
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, "", f"(timed out after {timeout:.0f} s)", timeout
    return p.returncode, p.stdout, p.stderr, time.perf_counter() - start


def compare(a: str, b: str) -> tuple[bool, float, str]:
    """(same text but numbers, largest relative difference of the numbers, first
    differing line) of two standard outputs, elapsed times masked."""
    la = [_TIME.sub("<time>", x) for x in a.splitlines()]
    lb = [_TIME.sub("<time>", x) for x in b.splitlines()]
    if len(la) != len(lb):
        return False, float("inf"), f"{len(la)} lines against {len(lb)}"
    worst, first = 0.0, ""
    for x, y in zip(la, lb):
        if _NUMBER.sub("#", x) != _NUMBER.sub("#", y):
            return False, float("inf"), f"{x!r} against {y!r}"
        for u, v in zip(_NUMBER.findall(x), _NUMBER.findall(y)):
            fu, fv = float(u), float(v)
            d = abs(fu - fv) / max(abs(fu), abs(fv), 1e-30) if fu != fv else 0.0
            if d > worst:
                worst, first = d, f"{x!r} against {y!r}"
    return True, worst, first


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", required=True,
                        help="JAX's examples folder (a JAX source tree's examples/)")
    parser.add_argument("--only", default="", help="comma-separated name fragments")
    parser.add_argument("--train", type=int, default=2048)
    parser.add_argument("--test", type=int, default=512)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--show", action="store_true", help="print mjax's output")
    parser.add_argument("--online", action="store_true",
                        help="also the examples that download what they run")
    a = parser.parse_args()
    root = workdir(a.examples, a.train, a.test)
    only = [o for o in a.only.split(",") if o]
    bad = 0
    for name in EXAMPLES:
        if only and not any(o in name for o in only):
            continue
        if not os.path.exists(os.path.join(root, name + ".py")):
            print(f"{name:36s} not in {a.examples}")
            continue
        if name in OFFLINE and not a.online:
            print(f"{name:36s} skipped: {OFFLINE[name]} (--online runs it)")
            continue
        need = NEEDS.get(name)
        if need is not None:
            try:
                __import__(need)
            except ImportError:
                print(f"{name:36s} skipped: needs {need}, not installed here")
                continue
        rm, out_m, err_m, tm = run(root, name, "mjax", a.timeout)
        rj, out_j, err_j, tj = run(root, name, "jax", a.timeout)
        if a.show:
            print(out_m, err_m)
        if rm != 0 or rj != 0:
            bad += 1
            print(f"{name:36s} exit codes mjax {rm}, jax {rj}")
            print("\n".join((err_m if rm else err_j).splitlines()[-12:]))
            continue
        same, worst, where = compare(out_m, out_j)
        bad += not same
        verdict = ("the same output" if same and worst == 0 else
                   f"numbers differ by {worst:.2g} relative at most ({where})" if same else
                   f"outputs differ: {where}")
        print(f"{name:36s} {verdict}; {tm:.1f} s against JAX's {tj:.1f} s")
    shutil.rmtree(root, ignore_errors=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
