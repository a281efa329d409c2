"""Every jaxpr op against the AD tables: each cell is a rule or a declared reason; and the
one statement of which ops have zero derivatives (`ZERO_DERIVATIVE`, filled by
`ad_util.defzero`) against JAX's own (real jax is the oracle).

Prints the op x {jvp, transpose} table (pytest -s shows it) and fails on any op with
neither a JVP rule nor a reason, or (for ops with a JVP rule) neither a transpose rule nor
a reason why it has none.
"""
from jax._src.interpreters import ad as jax_ad

import mjax.passes  # noqa: F401  (fills the tables)
from mjax.dialect import OPS
from mjax.passes.rules.tables import (JVP, JVP_NESTED, TRANSPOSE, TRANSPOSE_NESTED,
                                      ZERO_DERIVATIVE, has_zero_derivative)

# Ops with bodies (cond, while, scan) have their rules in the nested tables.
COLUMNS = {"jvp": (JVP, JVP_NESTED), "transpose": (TRANSPOSE, TRANSPOSE_NESTED)}


def _cell(column, cls):
    table, nested = COLUMNS[column]
    if cls in table or cls in nested:
        return "rule"
    why = table.reason(cls)
    return f"- ({why})" if why else None


def test_every_op_has_ad_rules_or_reasons():
    missing, lines = [], []
    for name, cls in sorted(OPS.items()):
        jvp = _cell("jvp", cls)
        tr = _cell("transpose", cls)
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
              "transpose", "squeeze", "expand_dims", "rev", "tile", "slice", "pad", "concatenate",
              "select_n", "convert_element_type", "reduce_precision", "copy", "real", "imag",
              "complex", "conj", "reduce_sum", "cumsum", "dynamic_slice",
              "dynamic_update_slice", "gather", "scatter_add", "scatter", "scatter_mul"]
    for name in linear:
        assert OPS["jaxpr." + name] in TRANSPOSE, name


# ---- zero derivatives ----------------------------------------------------------------------
def _jax_jvp_rules() -> dict:
    """JAX primitive name -> its JVP rule's function."""
    return {p.name: getattr(rule, "func", rule) for p, rule in jax_ad.primitive_jvps.items()}


def test_zero_derivative_ops_are_jaxs():
    # Every op JAX gives its zero JVP (`ad.defjvp_zero`) is stated here, and every op
    # stated here that JAX differentiates has JAX's zero JVP (stop_gradient: its own rule,
    # which gives a zero tangent too). The rest are integer, bool or key ops, which JAX
    # never differentiates.
    rules = _jax_jvp_rules()
    ours = {op.primitive for op in OPS.values()}
    jax_zero = {name for name, fn in rules.items() if fn is jax_ad.zero_jvp} & ours
    stated = {op.primitive for op in ZERO_DERIVATIVE}
    assert jax_zero <= stated, f"zero JVP in JAX, not stated: {sorted(jax_zero - stated)}"
    differ = sorted(name for name in stated & set(rules)
                    if rules[name] is not jax_ad.zero_jvp and name != "stop_gradient")
    assert not differ, f"stated zero here, JAX differentiates them: {differ}"


def _gives_zero_tangents(rule) -> bool:
    # (the JVP rules `ad_util.defzero` makes: the op's primal outputs, no tangents)
    return getattr(rule, "__qualname__", "").startswith("defzero.")


def test_zero_derivative_query_and_rules_agree():
    # The query the frontend asks (ad/concrete.py) against the JVP table the passes run:
    # a JVP rule registered over a defzero'd op, or a zero-tangent rule made without
    # defzero, makes the two disagree.
    for cls in OPS.values():
        assert has_zero_derivative(cls) == _gives_zero_tangents(JVP.get(cls)), \
            cls.OPERATION_NAME
    for cls, why in ZERO_DERIVATIVE.items():
        assert cls in JVP, f"{cls.OPERATION_NAME}: zero derivative stated, no JVP rule"
        assert TRANSPOSE.reason(cls) == "not linear: " + why
    assert has_zero_derivative(OPS["jaxpr.floor"])
    assert not has_zero_derivative(OPS["jaxpr.sin"])
