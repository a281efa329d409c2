"""The precision of the dots that differentiation and batching rules make with none given:
`jax_default_matmul_precision` as it stood when the op they transform was traced.

In JAX a rule runs when its op is bound under jvp or vmap, and a dot it binds with
precision=None reads the config then. mjax runs the rules later, in
--jaxpr-expand-transforms, where no config is in force (and `passes/` reads none). So the
frontend records the value on each op whose rules make such dots (`READERS`), when the
option is set while the op is traced (a `with default_matmul_precision(...)` block
inside a function included):

    %q, %r = "jaxpr.qr"(%a) {full_matrices = false,
                             mjax.default_precision = ["HIGHEST", "HIGHEST"]}

in the dialect's form of a dot's `precision` (a pair, a preset's name, a DotAlgorithm
tuple). forward_mode and batching apply such an op's rule `under(op)`, where
`rule_precision(None)` gives the recorded value; the rule's dots then carry it as their
own `precision` (their transposes and batched forms keep it, as JAX's do). The ops of
the op's kind the rule emits again (the primal qr of a JVP, the batched qr) get the record
too, so a second derivative or a derivative of a vmap reads it as well. An op without a
record (the option unset) makes dots with no precision, as before.

The attribute is an annotation (`mjax.`): --jaxpr-verify accepts it, it prints and parses
back with the module, and nothing but these rules reads it; lowering drops it with the op.

What the frontend does around it: a jit's trace is keyed by the tracing options (this one
included), and `jit(f).trace(x).lower()` lowers under the options of the trace (a trace
made again for another platform, and the custom_vjp bwd rules the passes trace, read them:
frontend/jit/stages.py), as JAX lowers its one trace.

Left different from JAX: its transpose rule of a dot bound with precision=None binds the
transposed dot with None again, which reads the option in force when the backward pass
runs (a `vjp` pullback called under another value than its forward's); mjax's transposes
keep the precision the dot was traced with.
"""
from __future__ import annotations

import threading

from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect import dot_algorithms
from mjax.dialect.ops import linalg as L
from mjax.passes.registry import op_error

ATTR = "mjax.default_precision"

# The op classes whose rules make dots with no precision (passes/rules/linalg.py: QR's JVP
# multiplies at the default, as JAX's qr_jvp_rule does; the other factorizations' rules
# ask for HIGHEST).
READERS = frozenset({L.QrOp})


class _State(threading.local):
    value = None


_state = _State()


def rule_precision(precision):
    """`precision`, or where it is None the default recorded on the op whose rule runs."""
    return _state.value if precision is None else precision


def record(op: ir.Operation, precision) -> None:
    """Records `precision` (any form dot_algorithms.normalize takes; None: nothing) on
    `op` as the default its rules' dots get."""
    value = dot_algorithms.normalize(precision)
    if value is not None:
        op.attributes[ATTR] = A.encode(value)


def recorded(op: ir.Operation):
    """The default precision recorded on `op` (dialect form), or None."""
    if ATTR not in op.attributes:
        return None
    try:
        value = A.decode(op.attributes[ATTR])
        value = value if isinstance(value, str) else tuple(value)
        dot_algorithms.check(value, ATTR)
    except (TypeError, ValueError) as e:
        raise op_error(op, str(e)) from None
    return value


def under(op: ir.Operation, rule, results_of=lambda r: r[0]):
    """rule() with the default recorded on `op` in force; the ops of `op`'s kind that
    define `results_of(rule())` (the rule's primal or batched results) get the record."""
    if ATTR not in op.attributes:
        return rule()
    before, _state.value = _state.value, recorded(op)
    try:
        out = rule()
    finally:
        _state.value = before
    attr = op.attributes[ATTR]
    for v in results_of(out):
        owner = getattr(v, "owner", None)
        owner = getattr(owner, "operation", owner)
        if isinstance(owner, ir.Operation) and owner.name == op.name \
                and ATTR not in owner.attributes:
            owner.attributes[ATTR] = attr
    return out


__all__ = ["ATTR", "READERS", "record", "recorded", "rule_precision", "under"]
