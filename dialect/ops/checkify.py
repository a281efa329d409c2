"""Run-time error checks: `jaxpr.check` and the `jaxpr.checkify` transformation op.

    "jaxpr.check"(%ok, %x) {msg = "{} must be positive"} : (tensor<i1>, tensor<f32>) -> ()
    %pred, %code, %p, %y = "jaxpr.checkify"(%x) {callee = @f, errors = ["user"],
        error_payloads = [["tensor<f32>"]]} : (tensor<f32>) -> (i1, i32, f32, f32 tensors)

`jaxpr.check` fails when its scalar `i1` operand is false; the other operands are the
values the message `msg` is formatted with (str.format fields, in operand order). It has
no results and is never removed; outside `checkify` it cannot be lowered (JAX raises the
same "not functionalized" error). `fmt` is the frontend's key for the original pytree of
format arguments (absent in hand-written IR). With `debug` (JAX's `debug_check`) a check
outside checkify is dropped instead.

`jaxpr.checkify @f` returns the error state of running @f, then @f's results. The state
is one slot per kind of error (JAX's error effects): `(pred: i1[], code: i32[],
payload...)`; `pred` says whether an error of that kind happened, `code` which check
failed first (codes number the checks of @f from 1, user checks first), the payload the
values its message is formatted with. `errors` lists the enabled checks ("user", "nan",
"index", "div"); `error_payloads` gives each slot's payload types (MLIR type text), which
`--jaxpr-checkify` (passes/jaxpr_checkify.py) recomputes from @f and checks.
JAX: checkify.check_p and checkify.checkify.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect.core import InferError, JaxprOp
from mjax.dialect.ops.transforms import TransformOp, _expect
from mjax.dialect.types import ShapedArray, aval_of

ERROR_KINDS = ("user", "nan", "index", "div")


class _Strings(A.AttrKind):
    expected = "a list of strings"

    def __init__(self, default=A.REQUIRED, choices=None):
        super().__init__(default)
        self.choices = choices

    def accepts(self, v):
        return isinstance(v, (tuple, list)) and all(
            isinstance(s, str) and (self.choices is None or s in self.choices) for s in v)

    def normalize(self, v):
        return tuple(str(s) for s in v)


class CheckOp(JaxprOp, name="check"):
    """Fails (under checkify: records an error) when `pred` is false; the other operands
    format `msg`. JAX: checkify.check_p."""
    num_operands = None
    min_operands = 1
    attributes = {"msg": A.Str(), "fmt": A.Int(default=None),
                  "debug": A.Bool(default=False)}
    pure = False

    @classmethod
    def infer(cls, pred, *payload, msg, fmt, debug):
        if pred.shape != () or pred.dtype != np.dtype(bool):
            raise InferError(f"'jaxpr.check' op predicate must be a scalar i1, got "
                             f"{pred.str_short()}")
        return ()


def parse_types(texts) -> list[ShapedArray]:
    """Avals of MLIR type texts ("tensor<3xi32>")."""
    out = []
    for t in texts:
        try:
            out.append(aval_of(ir.Type.parse(t)))
        except (ValueError, ir.MLIRError, TypeError):
            raise InferError(f"'jaxpr.checkify' op error_payloads entry {t!r} is not a "
                             f"tensor type") from None
    return out


def state_avals(payloads) -> list[ShapedArray]:
    """The error state's avals: per slot (pred: i1[], code: i32[], *payload)."""
    out = []
    for slot in payloads:
        out += [ShapedArray((), np.dtype(bool)), ShapedArray((), np.dtype(np.int32))]
        out += parse_types(slot)
    return out


class _Slots(A.AttrKind):
    expected = "a list of lists of type strings (one list per error slot)"

    def accepts(self, v):
        return isinstance(v, (tuple, list)) and all(_Strings().accepts(x) for x in v)

    def normalize(self, v):
        return tuple(tuple(str(s) for s in x) for x in v)


class CheckifyOp(TransformOp, name="checkify"):
    """Runs `callee` with its checks functionalized: results are the error state (laid
    out by `error_payloads`), then the callee's results. JAX: checkify.checkify."""
    attributes = {"callee": A.Sym(), "errors": _Strings(choices=ERROR_KINDS),
                  "error_payloads": _Slots()}

    @classmethod
    def infer_with_callees(cls, avals, params, signature):
        ins, outs = signature(params["callee"])
        _expect(cls.OPERATION_NAME, "operand types", avals, ins)
        return tuple(state_avals(params["error_payloads"])) + tuple(outs)


__all__ = ["CheckOp", "CheckifyOp", "ERROR_KINDS", "parse_types", "state_avals"]
