"""README's pass table and the pass registry agree: every registered flag has a row
(the Pallas and state passes too) and every row names a registered flag."""
import pathlib
import re

from mjax.passes import PASSES

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def readme_flags() -> list[str]:
    """The flags in the first column of README's "## Passes" table, in order."""
    section = README.read_text().split("\n## Passes\n", 1)[1].split("\n## ", 1)[0]
    flags = []
    for line in section.splitlines():
        if line.startswith("| `--"):
            first = line.split(" | ", 1)[0]
            flags += re.findall(r"`--([a-z0-9-]+)`", first)
    return flags


def test_readme_lists_every_registered_pass():
    flags = readme_flags()
    assert len(flags) == len(set(flags)), f"listed twice: {flags}"
    # (mjax's own passes: tests in this process may have registered users' passes)
    ours = sorted(f for f, cls in PASSES.items() if cls.__module__.startswith("mjax.passes."))
    assert ours == sorted(flags), (
        f"registered, not in README's pass table: {sorted(set(ours) - set(flags))}; "
        f"in the table, not registered: {sorted(set(flags) - set(ours))}")
