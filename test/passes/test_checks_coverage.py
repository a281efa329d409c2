"""The automatic checks of `--jaxpr-checkify` (the `CHECKS` column of the rule tables,
filled beside each op family's other rules) against JAX's own table (real jax is the
oracle): every op of this dialect JAX checks is checked here for the same errors, in
JAX's order, and no other op is."""
from jax._src import checkify as jax_checkify

import mjax.passes  # noqa: F401  (fills the tables)
from mjax.dialect import OPS
from mjax.passes.rules.tables import CHECKS

# JAX's check function -> the error kinds it checks, in its order
_KINDS = {
    "nan_error_check": ("nan",),
    "div_error_check": ("div", "nan"),               # a zero divisor, then NaNs
    "dynamic_slice_error_check": ("index",),
    "dynamic_update_slice_error_check": ("index",),
    "gather_error_check": ("index",),
    "scatter_error_check": ("index", "nan"),         # out of bounds, then NaNs
}


def _jax_checks() -> dict:
    """JAX primitive name -> the kinds JAX checks, for the automatic checks (its rules
    of control flow, calls and `check` are how it threads errors, not checks)."""
    out = {}
    for prim, rule in jax_checkify.error_checks.items():
        kinds = _KINDS.get(getattr(getattr(rule, "func", rule), "__name__", ""))
        if kinds is not None:
            out[prim.name] = kinds
    return out


def test_checks_are_jaxs():
    jax_checks = _jax_checks()
    assert "sin" in jax_checks and "gather" in jax_checks    # (the oracle was read)
    ours = {cls.jax_name: kinds for cls, kinds in CHECKS.items()}
    ops = {cls.jax_name for cls in OPS.values()}
    want = {name: kinds for name, kinds in jax_checks.items() if name in ops}
    missing = sorted(set(want) - set(ours))
    extra = sorted(set(ours) - set(want))
    differ = sorted(n for n in set(want) & set(ours) if want[n] != ours[n])
    assert not (missing or extra or differ), (missing, extra, differ)
