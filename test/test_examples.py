"""The README's main job runs and actually fits its model."""
import pathlib
import runpy

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_fit_mlp_reduces_the_loss(capsys):
    example = runpy.run_path(str(ROOT / "examples" / "fit_mlp.py"))
    final = example["main"]()
    printed = capsys.readouterr().out
    first = float(printed.split("step    0  loss ")[1].split()[0])
    assert final < 0.05 and final < first / 20, (first, final)
    assert "jaxpr.dot_general" in printed and "stablehlo.dot_general" in printed
