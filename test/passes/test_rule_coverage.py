"""Every op against every rule table: each cell is a rule or a deliberate "not supported"
with the reason a user sees; every op is also round-tripped by some lit file.

To add a column (JVP, TRANSPOSE, BATCH, ...), add it to TABLES: the matrix printed by
`pytest -s` and the checks below pick it up.
"""
from __future__ import annotations

import pathlib
import re

import pytest

from mjax.dialect import OPS
from mjax.passes.batching import BATCH_NESTED
from mjax.passes.rules import BATCH, LOWER, NOT_SUPPORTED, SHARD

# column name (the key used in NOT_SUPPORTED) -> table
TABLES = {"lower": LOWER, "batch": BATCH, "shard": SHARD}
# Ops with bodies (cond, while, scan) have their rules in the nested tables.
NESTED = {"batch": BATCH_NESTED}

ROOT = pathlib.Path(__file__).resolve().parents[1]
DIALECT_TESTS = ROOT / "dialect"


def cell(table_name: str, op) -> str:
    if op in TABLES[table_name] or op in NESTED.get(table_name, ()):
        return "rule"
    if (table_name, op) in NOT_SUPPORTED:
        return "n/s"
    return "MISSING"


def matrix() -> str:
    names = sorted(OPS)
    width = max(len(n) for n in names)
    lines = [" " * width + "  " + "  ".join(f"{t:>8}" for t in TABLES)]
    for name in names:
        lines.append(f"{name:<{width}}  " + "  ".join(f"{cell(t, OPS[name]):>8}"
                                                      for t in TABLES))
    return "\n".join(lines)


def test_print_matrix():
    print("\n" + matrix())


@pytest.mark.parametrize("table_name", sorted(TABLES))
def test_every_op_has_a_rule_or_a_reason(table_name):
    missing = [name for name, op in sorted(OPS.items()) if cell(table_name, op) == "MISSING"]
    assert not missing, (f"ops with neither a {table_name} rule nor a "
                         f"NOT_SUPPORTED[('{table_name}', op)] reason: {missing}\n" + matrix())


def test_not_supported_entries_are_deliberate():
    for (table_name, op), why in NOT_SUPPORTED.items():
        if table_name not in TABLES:
            continue  # a table this test does not list yet
        assert op in OPS.values(), f"NOT_SUPPORTED names an unregistered op {op}"
        assert op not in TABLES[table_name], (
            f"{op.OPERATION_NAME} has a {table_name} rule and a NOT_SUPPORTED reason")
        assert isinstance(why, str) and len(why.split()) >= 3, (
            f"NOT_SUPPORTED[('{table_name}', {op.OPERATION_NAME})] needs a reason a user can "
            f"act on, got {why!r}")


def _round_trip_files() -> list[pathlib.Path]:
    """Lit files under test/dialect/ that print parsed IR (not verifier-error files)."""
    files = []
    for path in sorted(DIALECT_TESTS.rglob("*.mlir")):
        run_lines = [l for l in path.read_text().splitlines() if "RUN:" in l]
        if run_lines and not any("--verify-diagnostics" in l for l in run_lines):
            files.append(path)
    return files


def test_every_op_has_a_round_trip_lit_test():
    seen = set()
    for path in _round_trip_files():
        seen.update(re.findall(r'"(jaxpr\.[\w.]+)"\(', path.read_text()))
    missing = sorted(set(OPS) - seen)
    assert not missing, (f"ops not in any round-trip lit file under test/dialect/: {missing}")
