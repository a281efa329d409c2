"""benchmarks/pallas_tpu_guides.py: which blocks of a guide are cells, in each format the
Pallas guides use, and a run of a small guide under mjax reported cell by cell."""
import importlib.util
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("pallas_tpu_guides",
                                               ROOT / "benchmarks" / "pallas_tpu_guides.py")
guides = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("pallas_tpu_guides", guides)   # (dataclasses look the module up)
_spec.loader.exec_module(guides)

F = "```"
MYST = f"""---
jupytext:
  text_representation:
    format_name: myst
---
Text.

{F}{{code-cell}} ipython3
:id: a1

a = 1
{F}

{F}python
not_a_cell()
{F}

{F}{{code-cell}} ipython3
---
id: b2
tags: [skip-execution]
---
skipped()
{F}

{F}{{code-cell}}
:tags: [raises-exception]

1 / 0
{F}
"""

JUPYTEXT = f"""---
jupyter:
  jupytext:
    text_representation:
      format_name: markdown
---
<!-- #region -->
{F}python
illustration()
{F}
<!-- #endregion -->

{F}python id="x"
b = 2
{F}
"""

PLAIN_DOCTESTS = f"""# Title
{F}python
illustration()
{F}
{F}python
>>> x = np.arange(3)
>>> print(x.sum() + 0.5)
3.5

{F}
"""

PLAIN_CODE = f"""{F}python
c = 3
{F}
{F}python
d = c + 1
{F}
"""

RST = """Title
=====

.. code-block:: python

  def f():
    return 1

  f()

Text.

.. code:: python

   g = 2
"""


def _cells(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return guides.extract_cells(str(p))


def test_myst_cells_options_and_tags(tmp_path):
    cells = _cells(tmp_path, "m.md", MYST)
    assert [c.source for c in cells] == ["a = 1\n", "skipped()\n", "1 / 0\n"]
    assert [c.skip for c in cells] == [None, "tagged skip-execution", None]
    assert [c.expect_error for c in cells] == [False, False, True]
    assert cells[0].line == MYST.splitlines().index("a = 1") + 1


def test_jupytext_cells_outside_regions(tmp_path):
    assert [c.source for c in _cells(tmp_path, "j.md", JUPYTEXT)] == ["b = 2\n"]


def test_plain_markdown_doctests_or_blocks(tmp_path):
    cells = _cells(tmp_path, "d.md", PLAIN_DOCTESTS)
    assert [c.kind for c in cells] == ["doctest"]
    assert [c.source for c in _cells(tmp_path, "p.md", PLAIN_CODE)] == ["c = 3\n",
                                                                        "d = c + 1\n"]


def test_rst_code_blocks(tmp_path):
    cells = _cells(tmp_path, "r.rst", RST)
    assert [c.source for c in cells] == ["def f():\n  return 1\n\nf()\n", "g = 2\n"]
    assert cells[1].line == RST.splitlines().index("   g = 2") + 1


def test_number_flag_of_doctests():
    check = guides._NumberChecker().check_output
    assert check("3.14\n", "3.14159\n", 0)
    assert not check("3.15\n", "3.14159\n", 0)


def test_a_guide_runs_cell_by_cell_under_mjax(tmp_path):
    d = tmp_path / "guides"
    d.mkdir()
    (d / "g.md").write_text(f"""{F}python
import jax
import jax.numpy as jnp
x = jnp.arange(4)
{F}
{F}python
assert int(x.sum()) == 7, "wrong sum"
{F}
{F}python
y = undefined_name
{F}
{F}python
assert jax.device_count() > 64, "needs many devices"
{F}
{F}python
never_run()
{F}
""")
    (d / "h.md").write_text(PLAIN_DOCTESTS)
    out = tmp_path / "r.json"
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "pallas_tpu_guides.py"),
                        str(d), "--out", str(out), "--timeout", "120"],
                       capture_output=True, text=True, timeout=300,
                       env={**__import__("os").environ, "JAX_PLATFORMS": "cpu"})
    assert r.returncode == 0, r.stderr
    rep = json.loads(out.read_text())
    assert rep["library"] == "mjax"
    cells = rep["guides"]["g"]["cells"]
    assert [c["status"] for c in cells] == ["passed", "failed", "failed", "skipped",
                                            "skipped"]
    assert cells[1]["error"]["type"] == "AssertionError"
    assert cells[1]["error"]["guide_line"] == 7
    assert cells[2]["error"]["type"] == "NameError"
    assert "needs many devices" in cells[3]["reason"]
    assert "cpu device(s), checked by cell 3" in cells[4]["reason"]
    assert [c["status"] for c in rep["guides"]["h"]["cells"]] == ["passed"]
    assert "g: 5 cells, run 3, passed 1, failed 2, skipped 2" in r.stdout
