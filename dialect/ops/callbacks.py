"""Host callbacks: `jaxpr.callback` calls a Python function from a staged program.

    %y = "jaxpr.callback"(%x) {callback_id = 3 : i64, effect = "pure",
                               result_shapes = [array<i64: 3>], result_dtypes = [f32]}
         : (tensor<3xf32>) -> tensor<3xf32>

`callback_id` indexes a process-wide registry of Python callables kept by the frontend
(mjax.callbacks); the IR only names it. `effect` says what the call may do:

    pure           no side effects: removed when unused, may be merged (pure_callback)
    unordered      side effects in any order (io_callback)
    ordered        side effects in program order (io_callback(ordered=True))
    debug          debug.callback / debug.print: never removed, tangents ignored
    debug_ordered  the same, in program order

Effectful ops are never removed by DCE nor merged by CSE (`pure` is per op here: it
reads `effect`). Ordered ones get a `!stablehlo.token` threaded through them when lowered.
JAX: callback.pure_callback_p, io_callback_p, debugging.debug_callback_p.
"""
from __future__ import annotations

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.ops.collectives import AxisNames
from mjax.dialect.types import ShapedArray, dtype_of

EFFECTS = ("pure", "unordered", "ordered", "debug", "debug_ordered")
ORDERED_EFFECTS = frozenset({"ordered", "debug_ordered"})
VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized")


def result_avals(result_shapes, result_dtypes) -> tuple:
    """The avals an op declares through its result_shapes/result_dtypes attributes (a
    host callback's, a user primitive's), refusing negative dimensions."""
    for s in result_shapes:
        if any(d < 0 for d in s):
            raise TypeError(f"result shape {s} has a negative dimension")
    return tuple(ShapedArray(tuple(s), d) for s, d in zip(result_shapes, result_dtypes))


class _DTypes(A.AttrKind):
    """A sequence of dtypes (one per result)."""

    expected = "a sequence of dtypes"

    def accepts(self, v):
        if not isinstance(v, (tuple, list)):
            return False
        try:
            [dtype_of(d) for d in v]
        except TypeError:
            return False
        return True

    def normalize(self, v):
        return tuple(dtype_of(d) for d in v)


class CallbackOp(JaxprOp, name="callback"):
    """Calls host callable `callback_id` on the operands; results have the declared
    `result_shapes`/`result_dtypes`. JAX: pure_callback_p / io_callback_p /
    debug_callback_p."""

    num_operands = None
    attributes = {
        "callback_id": A.Int(),
        "effect": A.Str(choices=EFFECTS),
        # Absent when there are no results (debug callbacks).
        "result_shapes": A.Nested(default=None, depth=2, dims=True),
        "result_dtypes": _DTypes(default=None),
        # pure callbacks only: how vmap batches the call (JAX's vmap_method).
        "vmap_method": A.Str(default=None, choices=VMAP_METHODS),
        # pure callbacks without a vmap_method staged in a shard_map (pmap) body: its
        # manual mesh axes (pmap's axis), whose vmaps (how mjax runs the body) call it
        # once per device, as JAX does.
        "manual_axes": AxisNames(default=None),
    }

    @property
    def pure(self) -> bool:
        """Whether DCE may remove it and CSE merge it: only pure callbacks."""
        return self.params["effect"] == "pure"

    @classmethod
    def infer(cls, *avals, callback_id, effect, result_shapes, result_dtypes, vmap_method,
              manual_axes=None):
        result_shapes, result_dtypes = result_shapes or (), result_dtypes or ()
        if callback_id < 0:
            raise TypeError(f"callback_id must be nonnegative, got {callback_id}")
        if len(result_shapes) != len(result_dtypes):
            raise TypeError(f"has {len(result_shapes)} result_shapes but "
                            f"{len(result_dtypes)} result_dtypes")
        if effect.startswith("debug") and result_shapes:
            raise TypeError(f"a debug callback has no results, got {len(result_shapes)}")
        if vmap_method is not None and effect != "pure":
            raise TypeError(f"vmap_method is only for pure callbacks, got effect "
                            f"'{effect}'")
        return result_avals(result_shapes, result_dtypes)
