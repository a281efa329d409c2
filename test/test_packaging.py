"""The wheel holds every module of the four source folders under its mjax.* name."""
import pathlib
import subprocess
import sys
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FOLDERS = {"frontend": "mjax", "dialect": "mjax/dialect", "passes": "mjax/passes",
           "runtime": "mjax/runtime"}


def test_wheel_contains_every_module(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "-q", "-w", str(tmp_path), str(ROOT)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = tmp_path.glob("mjax-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"{pkg}/{path.relative_to(ROOT / folder)}"
                for folder, pkg in FOLDERS.items()
                for path in (ROOT / folder).rglob("*.py")
                if "__pycache__" not in path.parts}
    missing = sorted(expected - names)
    assert not missing, f"modules missing from the wheel: {missing}"
    entry = [n for n in names if n.endswith("entry_points.txt")]
    assert entry and b"mjax-opt = mjax.passes.opt:main" in zipfile.ZipFile(wheel).read(entry[0])


def test_every_package_folder_is_listed():
    """(fast, for CI's tier: the wheel test above is slow) pyproject's `packages` names
    every folder with an __init__.py, so wheels hold them; an editable install finds an
    unlisted one by its folder and hides the gap."""
    import tomllib
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())
                 ["tool"]["setuptools"]["packages"])
    found = {(pkg + "/" + str(init.parent.relative_to(ROOT / folder))).rstrip("/.")
             .replace("/", ".")
             for folder, pkg in FOLDERS.items()
             for init in (ROOT / folder).rglob("__init__.py")
             if "__pycache__" not in init.parts}
    assert found - listed == set(), f"package folders missing from pyproject: {found - listed}"
