"""The examples in the docstrings of JAX's public API (`>>>` lines, as JAX's own doctests
run them: with jax, jnp, lax and np imported) run on mjax and print what they print on
JAX.

The examples are read from the installed jax's docstrings, one page per module (or group
of small modules), each docstring's examples in a namespace of their own, and run twice by
tutorial_runner.py, as the tutorials are: once on JAX, once with `jax` resolving to mjax. Per example we compare
what it printed (numbers within float tolerance) and the class of any exception. Examples
in KNOWN differ for the reason written next to them."""
from __future__ import annotations

import doctest
import importlib
import os

import pytest

from test_tutorials import DOCTEST_PRELUDE, cell_mismatch, run_cells

# The pages: each runs the examples of its modules' public names (an object reachable
# from several modules is read once, under the first) in one jax process and one mjax
# process. Small modules share a page, as start-up dominates their time.
PAGES = {
    "jax": ["jax"],
    "jax.nn": ["jax.nn"],
    "jax.tree": ["jax.tree", "jax.tree_util"],
    "jax.numpy.fft": ["jax.numpy.fft"],
    "jax.nn.initializers": ["jax.nn.initializers"],
    "jax.random": ["jax.random"],
    "jax.scipy.signal": ["jax.scipy.signal"],
    "jax.scipy.stats": ["jax.scipy.stats"],
    "jax.debug": ["jax.debug"],
    "jax.dtypes": ["jax.dtypes"],
    "jax.ad_checkpoint": ["jax.ad_checkpoint"],
    "jax.custom_derivatives": ["jax.custom_derivatives"],
    "jax.experimental.checkify": ["jax.experimental.checkify"],
    "jax.lax": ["jax.lax"],
    "jax.numpy.linalg": ["jax.numpy.linalg"],
    "jax.numpy": ["jax.numpy"],
    "jax.scipy.linalg": ["jax.scipy.linalg", "jax.lax.linalg"],
    "jax.scipy-small-modules": [
        "jax.scipy.integrate", "jax.scipy.interpolate", "jax.scipy.fft", "jax.scipy.ndimage",
        "jax.scipy.spatial.transform", "jax.scipy.cluster.vq"],
    "jax.sharding-errors-ref-etc": [
        "jax.sharding", "jax.errors", "jax.ref", "jax.export", "jax.profiler",
        "jax.experimental.multihost_utils", "jax.experimental.jet",
        "jax.experimental.sparse", "jax.experimental.pallas",
        "jax.experimental.buffer_callback", "jax.experimental.random"],
    "jax.example_libraries": ["jax.example_libraries.optimizers",
                              "jax.example_libraries.stax"],
}

# "module.name#k" -> why mjax's output of that example differs from JAX's.
KNOWN: dict = {
    "jax.numpy.einsum_path#6": "the printed path report is mjax's own, in NumPy's "
    "layout (JAX prints opt_einsum's, with a BLAS column); the same pairs are contracted in the same order",
}


def _pages() -> dict:
    """{page: [("module.name#k", example source)]}: the runnable examples of each page."""
    parser = doctest.DocTestParser()
    seen, pages = set(), {}
    for page, modules in PAGES.items():
        cells = pages.setdefault(page, [])
        for module in modules:
            mod = importlib.import_module(module)
            for name in sorted(dir(mod)):
                obj = getattr(mod, name, None)
                doc = getattr(obj, "__doc__", None)
                if name.startswith("_") or not isinstance(doc, str) or id(obj) in seen:
                    continue
                seen.add(id(obj))
                examples = [e for e in parser.get_examples(doc)
                            if not e.options.get(doctest.SKIP)]
                cells += [(f"{module}.{name}#{k}", e.source) for k, e in enumerate(examples)]
    return pages


def _write_page(cells, path) -> None:
    """The examples as a tutorial file: a new namespace at each docstring's first one."""
    with open(path, "w") as f:
        for label, source in cells:
            fresh = " new-namespace" if label.endswith("#0") else ""
            f.write(f"# %% {label}{fresh}\n{source}\n")


@pytest.mark.parametrize("page", list(PAGES))
def test_docstring_examples_match_jax(page, tmp_path):
    cells = _pages()[page]
    path = tmp_path / "page.py"
    _write_page(cells, path)
    mine, theirs = run_cells(str(path), DOCTEST_PRELUDE, tmp_path, page)
    problems = []
    for (label, source), m, t in zip(cells, mine, theirs, strict=True):
        why = cell_mismatch(m, t)
        if label in KNOWN:
            if why is None:
                problems.append(f"{label} now matches jax: remove it from KNOWN")
            continue
        if why is not None:
            problems.append(f"{label}:\n{source}{why}")
    assert not problems, f"{page}: {len(problems)} examples differ from jax:\n" + \
        "\n\n".join(problems)
