"""Every jaxpr op against the AD tables: each cell is a rule or a declared reason.

Prints the op x {jvp, transpose} table (pytest -s shows it) and fails on any op with
neither a JVP rule nor a reason, or (for ops with a JVP rule) neither a transpose rule nor
a reason why it has none.
"""
import mjax.passes  # noqa: F401  (fills the tables)
from mjax.dialect import OPS
from mjax.passes.forward_mode import JVP_NESTED
from mjax.passes.reverse_mode import TRANSPOSE_NESTED
from mjax.passes.rules import JVP, NOT_SUPPORTED, TRANSPOSE

# Ops with bodies (cond, while, scan) have their rules in the nested tables.
NESTED = {"jvp": JVP_NESTED, "transpose": TRANSPOSE_NESTED}


def _cell(table, rules, cls):
    if cls in rules or cls in NESTED[table]:
        return "rule"
    why = NOT_SUPPORTED.get((table, cls))
    return f"- ({why})" if why else None


def test_every_op_has_ad_rules_or_reasons():
    missing, lines = [], []
    for name, cls in sorted(OPS.items()):
        jvp = _cell("jvp", JVP, cls)
        tr = _cell("transpose", TRANSPOSE, cls)
        lines.append(f"{name:32} jvp: {jvp or 'MISSING':10.60} transpose: {tr or 'MISSING':.60}")
        if jvp is None:
            missing.append(f"{name}: no JVP rule and no declared reason")
        if tr is None:
            missing.append(f"{name}: no transpose rule and no declared reason")
    print("\n".join(lines))
    assert not missing, "\n".join(missing)


def test_linear_ops_have_transposes():
    # The linear ops JVP rules emit on tangents must all be transposable.
    linear = ["add", "sub", "neg", "mul", "div", "dot_general", "reshape", "broadcast_in_dim",
              "transpose", "squeeze", "expand_dims", "rev", "slice", "pad", "concatenate",
              "select_n", "convert_element_type", "reduce_precision", "copy", "real", "imag",
              "complex", "conj", "reduce_sum", "cumsum", "dynamic_slice",
              "dynamic_update_slice", "gather", "scatter_add", "scatter", "scatter_mul"]
    for name in linear:
        assert OPS["jaxpr." + name] in TRANSPOSE, name
