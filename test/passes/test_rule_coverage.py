"""Every op against every rule table: each cell is a rule or a deliberate `unsupported`
whose reason is the error a user sees; every op is also round-tripped by some lit file.

The tables are read through their one type (`RuleTable`, passes/rules/tables.py): a
table the passes add shows up in `ALL_TABLES`, and `test_every_table_is_read_here`
fails until it is a column below (a table each op must decide on) or an optional one.
`pytest -s` prints the matrix.
"""
from __future__ import annotations

import pathlib
import re

import pytest
from jaxlib.mlir import ir

import mjax.passes  # noqa: F401  (fills every table)
import mjax.passes.mosaic  # noqa: F401  (fills MOSAIC: the pass imports it at first use)
from mjax.dialect import OPS
from mjax.dialect.context import context
from mjax.dialect.ops import transforms as T
from mjax.passes.batching import Batcher
from mjax.passes.expansion import Expander
from mjax.passes.forward_mode import Jvp
from mjax.passes.ir_util import nested_ops
from mjax.passes.jaxpr_to_stablehlo import lower_op
from mjax.passes.registry import PassError
from mjax.passes.rules.tables import (ALL_TABLES, BATCH, BATCH_NESTED, CHECKS, DISCHARGE,
                                      DISCHARGE_NESTED, EXPAND, JVP, JVP_NESTED, KEY_DATA,
                                      LOWER, MOSAIC, PARTIAL_EVAL, PARTIAL_SUMS, SHARD, TRANSPOSE,
                                      TRANSPOSE_NESTED, TRITON, WEAK_COTANGENTS, WEAK_TYPES,
                                      ZERO_DERIVATIVE, RuleTable)
from mjax.passes.triton.kernel import KernelLowering

# column -> (table, the table of the same transformation for ops with bodies, or None).
# The ops a column must decide on are its table's `covers`.
COLUMNS = {
    "lower": (LOWER, None),
    "jvp": (JVP, JVP_NESTED),
    "transpose": (TRANSPOSE, TRANSPOSE_NESTED),
    "batch": (BATCH, BATCH_NESTED),
    "shard": (SHARD, None),
    "triton": (TRITON, None),
    "mosaic": (MOSAIC, None),
    "expand": (EXPAND, None),
}
# Tables an op may be absent from: it then takes the pass's default path.
OPTIONAL = {
    PARTIAL_EVAL: "ops without a rule are all known or all unknown",
    DISCHARGE: "ref ops only; ops that take no ref are copied",
    DISCHARGE_NESTED: "control flow whose bodies use refs",
    CHECKS: "ops without automatic checks are copied by checkify",
    ZERO_DERIVATIVE: "only the ops whose derivative is zero",
    PARTIAL_SUMS: "ops without an entry take no unreduced operands (JAX raises)",
    KEY_DATA: "ops without a rule refuse key arrays (JAX's TypeError)",
    WEAK_TYPES: "ops without a rule: results weak when all inexact operands are",
    WEAK_COTANGENTS: "ops without a rule: the generic rule (all incoming and operands)",
}

ROOT = pathlib.Path(__file__).resolve().parents[1]
DIALECT_TESTS = ROOT / "dialect"


def cell(column: str, op) -> str | None:
    table, nested = COLUMNS[column]
    if op in table or (nested is not None and op in nested):
        return "rule"
    if table.reason(op) is not None:
        return "n/s"
    return None if table.covers(op) else "-"


def optional_cell(table, op) -> str:
    """An optional table's entry for `op`: its rule, shortened when it is a fact (the
    error kinds checkify checks, a partial-sum kind), else "-"."""
    rule = table.get(op)
    if rule is None:
        return "-"
    if isinstance(rule, tuple):
        return ",".join(rule)
    return rule if isinstance(rule, str) and len(rule) <= 12 else "rule"


def matrix() -> str:
    """Every op against every table: the columns each op must decide on, then the
    optional ones (facts such as zero derivatives, checks and partial sums)."""
    names = sorted(OPS)
    width = max(len(n) for n in names)
    heads = list(COLUMNS) + [t.name for t in OPTIONAL]
    lines = [" " * width + "  " + "  ".join(f"{c:>11}" for c in heads)]
    for name in names:
        cells = [cell(c, OPS[name]) or "MISSING" for c in COLUMNS]
        cells += [optional_cell(t, OPS[name]) for t in OPTIONAL]
        lines.append(f"{name:<{width}}  " + "  ".join(f"{c:>11.11}" for c in cells))
    return "\n".join(lines)


def test_print_matrix():
    print("\n" + matrix())


def test_every_table_is_read_here():
    read = {t for t, _ in COLUMNS.values()} | {n for _, n in COLUMNS.values() if n}
    assert set(ALL_TABLES) == read | set(OPTIONAL), (
        "a RuleTable this test does not read (add it to COLUMNS or OPTIONAL): "
        f"{sorted(t.name for t in set(ALL_TABLES) - read - set(OPTIONAL))}")


@pytest.mark.parametrize("column", sorted(COLUMNS))
def test_every_op_has_a_rule_or_a_reason(column):
    table = COLUMNS[column][0]
    missing = [name for name, op in sorted(OPS.items()) if cell(column, op) is None]
    assert not missing, (f"ops with neither a {column} rule nor a "
                         f"{table.name.upper()}.unsupported(op, why) reason: {missing}\n"
                         + matrix())


@pytest.mark.parametrize("table", ALL_TABLES, ids=lambda t: t.name)
def test_entries_are_ops_and_reasons_are_deliberate(table):
    ops = set(OPS.values())
    for op in list(table) + list(table.reasons):
        assert op in ops, f"{table.name} has an entry for {op!r}, which is not a jaxpr op"
    both = sorted(op.OPERATION_NAME for op in table.reasons if op in table)
    assert not both, f"{table.name} has both a rule and a reason for {both}"
    for op, why in table.reasons.items():
        assert isinstance(why, str) and len(why.split()) >= 3, (
            f"{table.name}.unsupported({op.OPERATION_NAME}) needs a reason a user can act "
            f"on, got {why!r}")


def test_rules_are_keyed_by_op_class():
    table = RuleTable("scratch")
    with pytest.raises(TypeError, match="keyed by op class"):
        table.register("jaxpr.sin")
    with pytest.raises(TypeError, match="keyed by op class"):
        table.unsupported("jaxpr.sin", "never by its name")
    sin, cos = OPS["jaxpr.sin"], OPS["jaxpr.cos"]
    table.unsupported(sin, "not written yet here")
    table.register(sin, cos)(len)            # a rule wins over a reason given before
    assert table.get(sin) is len and table.reason(sin) is None
    with pytest.raises(ValueError, match="has a scratch rule"):
        table.unsupported(cos, "it has a rule already")
    table.unsupported(cos, "a default reason", replace=False)   # the rule stays
    assert table.lookup(cos) is len
    with pytest.raises(LookupError, match="no rule for this op"):
        table.lookup(OPS["jaxpr.tan"])


# ---- a reason is the error a user sees ----------------------------------------------------
def _round_trip_files() -> list[pathlib.Path]:
    """Lit files under test/dialect/ that print parsed IR (not verifier-error files)."""
    files = []
    for path in sorted(DIALECT_TESTS.rglob("*.mlir")):
        run_lines = [line for line in path.read_text().splitlines() if "RUN:" in line]
        if run_lines and not any("--verify-diagnostics" in line for line in run_lines):
            files.append(path)
    return files


def _chunks() -> dict[str, str]:
    """op name -> the first round-trip chunk that holds it."""
    found = {}
    for path in _round_trip_files():
        for chunk in path.read_text().split("// -----"):
            for name in re.findall(r'"(jaxpr\.[\w.]+)"\(', chunk):
                found.setdefault(name, chunk)
    return found


CHUNKS = _chunks()


def _instance(name: str):
    """(module, the first `name` op in it), parsed from the round-trip lit files."""
    module = ir.Module.parse(CHUNKS[name], context())
    return module, next(op for op in nested_ops(module) if op.name == name)


def _lower(module, op):
    lower_op(op)


def _jvp(module, op):
    jvp = Jvp(Expander(module), ir.InsertionPoint(module.body), linearize=False)
    jvp.rule_for(op)(op, [(v, v) for v in op.operands])   # every operand has a tangent


def _batch(module, op):
    batcher = Batcher(Expander(module), ir.InsertionPoint(module.body), 2)
    batcher.rule_for(op)(op, [(v, 0) for v in op.operands])


def _triton(module, op):
    KernelLowering(module, (1,), "cuda").rule_for(op)     # (the lookup raises the reason)


# column -> how its pass meets one op. Ops without operands never get a tangent or a
# batch dim, and unexpanded transformation ops are refused before any table is read.
USER_PATHS = {"lower": _lower, "jvp": _jvp, "batch": _batch, "triton": _triton}
REASON_CELLS = [
    (column, name) for column in USER_PATHS for name, op in sorted(OPS.items())
    if cell(column, op) == "n/s"
    and not (column in ("jvp", "batch") and (op.num_operands == 0
                                             or issubclass(op, T.TransformOp)))]


@pytest.mark.parametrize("column,name", REASON_CELLS)
def test_unsupported_reason_is_the_users_error(column, name):
    why = COLUMNS[column][0].reason(OPS[name])
    with context(), ir.Location.unknown(context()):
        module, op = _instance(name)
        with pytest.raises(PassError) as info:
            USER_PATHS[column](module, op)
    assert f"'{name}' op" in str(info.value) and why in str(info.value)


def test_every_op_has_a_round_trip_lit_test():
    missing = sorted(set(OPS) - set(CHUNKS))
    assert not missing, f"ops not in any round-trip lit file under test/dialect/: {missing}"
