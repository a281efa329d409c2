"""Facts about ops stated on the op classes (dialect/core.py's JaxprOp) agree with the
rule tables that act on them."""
from mjax.dialect.core import OPS
from mjax.passes.rules.tables import JVP


def _defzero(rule) -> bool:
    # (AD.defzero's rules; passes/rules/ad_util.py)
    return getattr(rule, "__qualname__", "").startswith("defzero.")


def test_zero_derivative_ops_are_the_ones_ad_gives_zero_tangents():
    stated = {cls for cls in OPS.values() if cls.zero_derivative}
    in_ad = {op for op, rule in JVP.items() if isinstance(op, type) and _defzero(rule)}
    assert stated == in_ad, (sorted(c.__name__ for c in stated - in_ad),
                             sorted(c.__name__ for c in in_ad - stated))
