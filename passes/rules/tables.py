"""Every rule table of the passes, one `RuleTable` type keyed by op class.

    LOWER.register(SinOp)(rule)        # or as a decorator: @LOWER.register(SinOp, CosOp)
    LOWER.unsupported(TopKOp, why)     # a deliberate gap: `why` is what the user reads
    rule = LOWER.get(cls)              # None when missing (the hot path)
    rule = LOWER.lookup(cls)           # MissingRule naming the reason when missing

Rules of one primitive family live together in `rules/<family>.py` and register
themselves here through the family registrars (`lowering`, `ad_util.defjvp`,
`batch_util.defvectorized`, `sharding.shard_rule`, ...); each pass is a short driver over
its tables. Rules of ops with bodies (cond, while, scan, calls, pallas_call) are in the
`*_NESTED` tables: they get the transformation itself as their first argument and reach
nested regions and callees through it, so no rule imports a pass.

The coverage tests (test/passes/test_rule_coverage.py) read every table: each op of the
dialect a table must decide on has a rule there or a stated reason.
"""
from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable, Generic, Iterator, TypeVar

from jaxlib.mlir import ir

from mjax.dialect.core import JaxprOp
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import ShapedArray, aval_of

R = TypeVar("R")


class MissingRule(LookupError):
    """A table has no rule for an op; the message says why (its stated reason, else
    the table's default)."""


class RuleTable(Generic[R]):
    """Op class -> rule, plus the ops left out on purpose with the reason a user sees.

    `name` labels the table in the coverage matrix; `missing` is the message for an op
    with neither a rule nor a reason; `covers(op class)` says which ops must have one of
    the two (None: the table is optional, ops without an entry take a default path)."""

    def __init__(self, name: str, missing: str = "no rule for this op",
                 covers: Callable[[type], bool] | None = None):
        self.name = name
        self.missing = missing
        self.covers = covers
        self.rules: dict[type, R] = {}
        self.reasons: dict[type, str] = {}
        # (bound once: the passes look a rule up per op)
        self.get: Callable[[type], R | None] = self.rules.get

    def register(self, *ops: type):
        """Decorator: `rule` is this table's rule for each of `ops` (a reason given
        before is dropped: the rule wins)."""
        for op in ops:
            if not isinstance(op, type):
                raise TypeError(f"{self.name} rules are keyed by op class, got {op!r}")

        def wrap(rule: R) -> R:
            for op in ops:
                self.rules[op] = rule
                self.reasons.pop(op, None)
            return rule
        return wrap

    def update(self, rules: dict) -> None:
        """Registers each `op: rule` of `rules` (one-line rules of a family)."""
        for op, rule in rules.items():
            self.register(op)(rule)

    def unsupported(self, op: type, why: str, *, replace: bool = True) -> None:
        """`op` deliberately has no rule here; `why` is the error a user sees. With
        `replace=False` a rule or reason already stated wins (registrars use it to
        give a default reason)."""
        if not isinstance(op, type):
            raise TypeError(f"{self.name} reasons are keyed by op class, got {op!r}")
        if op in self.rules:
            if not replace:
                return
            raise ValueError(f"{op.__name__} has a {self.name} rule; it cannot also be "
                             f"unsupported ({why!r})")
        if replace or op not in self.reasons:
            self.reasons[op] = why

    def reason(self, op: type) -> str | None:
        """The stated reason `op` has no rule (None: none stated)."""
        return self.reasons.get(op)

    def why(self, op: type) -> str:
        """What to tell a user about an op without a rule."""
        return self.reasons.get(op, self.missing)

    def lookup(self, op: type) -> R:
        rule = self.rules.get(op)
        if rule is None:
            raise MissingRule(self.why(op))
        return rule

    # -- the mapping protocol (tests swap rules with monkeypatch.setitem/delitem) --------
    def __contains__(self, op) -> bool:
        return op in self.rules

    def __getitem__(self, op: type) -> R:
        return self.rules[op]

    def __setitem__(self, op: type, rule: R) -> None:
        self.register(op)(rule)

    def __delitem__(self, op: type) -> None:
        del self.rules[op]

    def __iter__(self) -> Iterator[type]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def items(self):
        return self.rules.items()

    def __repr__(self) -> str:
        return (f"RuleTable({self.name!r}: {len(self.rules)} rules, "
                f"{len(self.reasons)} unsupported)")


def _every_op(cls) -> bool:
    return True


def _transformation_op(cls) -> bool:
    return issubclass(cls, T.TransformOp)


# ---- per-op rules of the transformations ----------------------------------------------
# Lowering (passes/jaxpr_to_stablehlo.py): rule(ctx: LowerCtx, *operands, **params)
LOWER: RuleTable[Callable] = RuleTable("lower", "no StableHLO lowering rule for this op",
                                       _every_op)
# Forward mode (passes/forward_mode.py; signatures in rules/ad_util.py)
JVP: RuleTable[Callable] = RuleTable("jvp", "no JVP rule for this op", _every_op)
# Transposition for reverse mode (passes/reverse_mode.py; rules/ad_util.py)
TRANSPOSE: RuleTable[Callable] = RuleTable("transpose",
                                           "no transpose rule (is the op linear?)", _every_op)
# Batching (passes/batching.py; signature in rules/batch_util.py)
BATCH: RuleTable[Callable] = RuleTable("batch", "no batching rule for this op", _every_op)
# Sharding propagation (passes/jaxpr_propagate_shardings.py; rules/sharding.py): an op's
# dimension factors
SHARD: RuleTable[Callable] = RuleTable("shard", "no sharding rule", _every_op)

# ---- ops with bodies: rules that get the transformation itself -------------------------
# rule(jvp: forward_mode.Jvp, op, [(primal, tangent | None)] per operand)
#     -> [(primal, tangent | None)] per result
JVP_NESTED: RuleTable[Callable] = RuleTable("jvp_nested")
# rule(batcher: batching.Batcher, op, vals, dims, b: BatchBuilder) -> (outs, out_dims);
# called when an operand is batched or the op reads the vmap's named axis
BATCH_NESTED: RuleTable[Callable] = RuleTable("batch_nested")
# rule(tr: reverse_mode.Transposer, op, cts of results (None: zero), entries of operands
#      (value | Linear), b: Builder) -> one cotangent (or None) per operand
TRANSPOSE_NESTED: RuleTable[Callable] = RuleTable("transpose_nested")
# Partial evaluation of ops that should not be all-known or all-unknown (control flow
# splitting its body): rule(pe: partial_eval.PartialEval, op, entries) -> entries per
# result. JAX: partial_eval_jaxpr_custom_rules.
PARTIAL_EVAL: RuleTable[Callable] = RuleTable("partial_eval")

# ---- zero derivatives ---------------------------------------------------------------
# Ops whose outputs have zero tangents whatever their inputs' (floor, sign, comparisons,
# integer and key ops): the op class -> why. `ad_util.defzero` fills it (with the op's
# JVP rule); `has_zero_derivative` answers for the frontend too.
ZERO_DERIVATIVE: RuleTable[str] = RuleTable("zero_derivative")


def has_zero_derivative(op: type) -> bool:
    """Whether `op`'s outputs always get zero (symbolic) tangents: JAX's JVP drops the
    tangent of such a primitive, so its results are plain values, never tangents."""
    return op in ZERO_DERIVATIVE.rules


# ---- transformation ops ---------------------------------------------------------------
# --jaxpr-expand-transforms (passes/expansion.py): rule(expander, op) replaces `op`
EXPAND: RuleTable[Callable] = RuleTable("expand", "no expansion rule for this "
                                        "transformation op", _transformation_op)

# ---- refs (Pallas kernels) -------------------------------------------------------------
# --jaxpr-discharge-state (passes/jaxpr_discharge_state.py; rules/state.py):
# rule(b, ref value, operand values, starts, **params) -> (new ref value | None, results)
DISCHARGE: RuleTable[Callable] = RuleTable("discharge", "cannot discharge an op that "
                                           "takes a ref")
# Control flow whose bodies use refs: rule(discharge, op)
DISCHARGE_NESTED: RuleTable[Callable] = RuleTable("discharge_nested")

# --jaxpr-pallas-to-triton (passes/triton/): rule(kl: KernelLowering, op, *operands,
# **params) -> [values]
TRITON: RuleTable[Callable] = RuleTable("triton", "no Triton lowering rule for this op",
                                        _every_op)
# --jaxpr-pallas-to-mosaic (passes/mosaic/): rule(kl, op, *operands, **params) -> [values]
MOSAIC: RuleTable[Callable] = RuleTable("mosaic", "no Mosaic lowering rule for this op",
                                        _every_op)

# ---- checkify ----------------------------------------------------------------------
# The automatic error checks of an op (rules/checkify.py): op class -> error kinds, in
# JAX's order (JAX: checkify's error_checks)
CHECKS: RuleTable[tuple] = RuleTable("checks")


def nan_checked(*ops: type) -> None:
    """checkify checks the results of `ops` for NaNs (JAX: checkify.nan_primitives); a
    rule file states it beside the ops' other rules."""
    for op in ops:
        CHECKS[op] = ("nan",)

# ---- partial sums (unreduced values) ---------------------------------------------------
# How an op treats operands that are partial sums over mesh axes (each device holds one
# term of the sum: JAX's unreduced arrays): op class -> one of the kinds below. Read by
# the frontend's sharding types (sharding_types.partial_rule, JAX's unreduced rules) and
# by --jaxpr-propagate-shardings' unreduced layouts (passes/unreduced_loops.py). An op
# without an entry takes no partial sums: JAX raises NotImplementedError for it, and the
# passes end a chain of partial sums there. rules/sharding.py states the entries.
PER_PARTIAL = "per_partial"  # linear in operand 0: each device applies it to its term
SUM = "sum"                  # adds its operands: all unreduced alike, and so is the result
PRODUCT = "product"          # bilinear: one operand unreduced, the other reduced over it
CONTRACTION = "contraction"  # takes no unreduced operand; its sum over split dimensions
#                              is a partial sum until reduced
UPDATE = "update"            # writes operand 1 into operand 0: a partial sum when both are
#                              (a loop's stacked accumulator); JAX's types have no rule
PARTIAL_SUMS: RuleTable[str] = RuleTable("partial_sums")

# ---- key arrays ---------------------------------------------------------------------
# An op on key arrays (the frontend's PRNGKeyArray: key<impl>[*S] holding uint32[*S, *K]
# data, K the implementation's key shape) as the same op on the data, with K appended to
# its shape attributes and K's trailing dims to its dimension attributes (JAX: the
# physical rules of its extended dtypes). rule(emit, op class, K, args, avals, params)
# -> the result's data (a list: several results): `args` are the operands with each key
# array replaced by its data, `avals` the operands' own (key-typed for keys), and
# emit(op class, *operands, **params) applies an op (the frontend's bind). An op without
# a rule refuses key operands (JAX's TypeError). rules/random.py states them.
KEY_DATA: RuleTable[Callable] = RuleTable("key_data")

# ---- weak types of values and cotangents (passes/weak_cotangents.py) -------------------
# Which values of a traced function, and which cotangents of its reverse-mode
# derivative, JAX types weakly; the ops' types carry no weak flag. Ops without an entry
# take the generic rules (results weak as the op class's `weak_result` says; an
# operand's cotangent weak when every incoming cotangent and inexact operand is).
# rule(types: weak_cotangents.WeakTypes, op, weak: {value: flag}) -> a flag per result
WEAK_TYPES: RuleTable[Callable] = RuleTable("weak_types")
# rule(types, op, weak, ct: {value: flag}, outs: the results' cotangents' flags, top:
#      the outermost function) -> a flag (or None: no cotangent) per operand, or None
#      for the generic rule
WEAK_COTANGENTS: RuleTable[Callable] = RuleTable("weak_cotangents")

ALL_TABLES = (LOWER, JVP, TRANSPOSE, BATCH, SHARD, JVP_NESTED, BATCH_NESTED,
              TRANSPOSE_NESTED, PARTIAL_EVAL, ZERO_DERIVATIVE, EXPAND, DISCHARGE,
              DISCHARGE_NESTED, TRITON, MOSAIC, CHECKS, PARTIAL_SUMS, KEY_DATA, WEAK_TYPES,
              WEAK_COTANGENTS)


# The platform jaxpr-to-stablehlo lowers for ("" when not told: `platform=cpu` in its
# options), for rules whose StableHLO depends on it (`platform_rules`).
LOWERING_PLATFORM: ContextVar[str] = ContextVar("mjax_lowering_platform", default="")

# What a run of jaxpr-to-stablehlo does once every op is lowered: a rule appends a
# function () -> None that erases ops it left dead which the pass's walk has still to visit
# (the walk holds them: a rule may not erase them itself). None outside the pass.
AFTER_LOWERING: ContextVar[list | None] = ContextVar("mjax_after_lowering", default=None)


@dataclass(frozen=True)
class PlatformRules:
    """Which of JAX's per-platform lowering rules (`mlir.register_lowering(..., platform=)`)
    a platform takes; a platform with no entry in PLATFORM_RULES takes XLA's generic
    lowerings, as an unknown plugin does in JAX. The runtime's platform record
    (runtime/backend.py) says the rest of what a platform is."""

    lapack: bool = False              # linalg calls jaxlib's LAPACK kernels (the CPU)
    solver_prefix: str | None = None  # linalg calls jaxlib's GPU solvers: 'cu', 'hip'
    tpu_linalg: bool = False          # linalg as JAX's TPU rules (XLA's TPU custom calls)
    mixed_dtype_dots: bool = False    # dots take real operands of two dtypes as they are
    dot_algorithm_presets: bool = False   # only the CPU's presets of dot algorithms
    expand_scatter_padding: bool = False  # select_and_scatter_add pads its operand first
    approx_top_k: bool = False        # approx_max/min_k are XLA's approximate ApproxTopK
    rolled_threefry: bool = False     # threefry's rounds in a while loop, not unrolled


# By jaxpr-to-stablehlo's `platform` option; "": lowered for no platform (IREE). (JAX
# expands select_and_scatter_add's padding on the CPU and GPUs, whose XLA backends
# crashed on a padded one.) A new platform that shares some of these rules gets an entry.
PLATFORM_RULES: dict[str, PlatformRules] = {
    "": PlatformRules(expand_scatter_padding=True),
    "cpu": PlatformRules(lapack=True, dot_algorithm_presets=True,
                         expand_scatter_padding=True, rolled_threefry=True),
    "cuda": PlatformRules(solver_prefix="cu", expand_scatter_padding=True),
    "rocm": PlatformRules(solver_prefix="hip", expand_scatter_padding=True),
    "tpu": PlatformRules(tpu_linalg=True, mixed_dtype_dots=True, approx_top_k=True),
}
_GENERIC_RULES = PlatformRules()


def platform_rules(platform: str | None = None) -> PlatformRules:
    """The rules of `platform` (default: the one jaxpr-to-stablehlo lowers for)."""
    name = LOWERING_PLATFORM.get() if platform is None else platform
    return PLATFORM_RULES.get(name, _GENERIC_RULES)


class LowerCtx:
    """What a lowering rule may look at besides its operands. The avals are read off the
    op's types when a rule first asks: most one-to-one rules never do, and building them
    for every op was a tenth of lowering a long chain of small ops.

    Rules of ops with regions lower the bodies they clone through `lower_nested` and the
    ops they emit through `lower_op` (the pass's own walk, handed in as `lowering`)."""

    __slots__ = ("op", "backend", "loc", "lowering", "_avals_in", "_avals_out", "_extra")

    def __init__(self, op: ir.Operation, avals_in: list[ShapedArray] | None = None,
                 avals_out: list[ShapedArray] | None = None, backend: str = "xla",
                 loc: ir.Location | None = None, extra: dict | None = None,
                 lowering=None):
        self.op, self.backend, self.loc = op, backend, loc
        self.lowering = lowering
        self._avals_in, self._avals_out, self._extra = avals_in, avals_out, extra

    @property
    def avals_in(self) -> list[ShapedArray]:
        if self._avals_in is None:
            self._avals_in = [aval_of(v.type) for v in self.op.operands]
        return self._avals_in

    @property
    def avals_out(self) -> list[ShapedArray]:
        if self._avals_out is None:
            self._avals_out = [aval_of(r.type) for r in self.op.results]
        return self._avals_out

    @property
    def extra(self) -> dict:
        if self._extra is None:
            self._extra = {}
        return self._extra

    def lower_nested(self, root: ir.Operation) -> None:
        """Lowers the jaxpr ops inside `root`'s regions (bodies a rule cloned)."""
        self.lowering.lower_nested(root, self.backend)

    def lower_op(self, op: ir.Operation) -> None:
        """Lowers one jaxpr op a rule emitted."""
        self.lowering.lower_op(op, self.backend)


def lowering(*ops: type[JaxprOp]):
    """Decorator: `rule(ctx, *operands, **params) -> Value | list[Value]` lowers `ops`."""
    return LOWER.register(*ops)


__all__ = ["ALL_TABLES", "BATCH", "BATCH_NESTED", "CHECKS", "CONTRACTION", "DISCHARGE",
           "DISCHARGE_NESTED", "EXPAND", "JVP", "JVP_NESTED", "KEY_DATA", "LOWER",
           "LowerCtx", "MOSAIC", "MissingRule", "PARTIAL_EVAL", "PARTIAL_SUMS", "PER_PARTIAL",
           "PLATFORM_RULES", "PlatformRules",
           "PRODUCT", "RuleTable", "SHARD", "SUM", "TRANSPOSE", "TRANSPOSE_NESTED", "TRITON",
           "UPDATE", "WEAK_COTANGENTS", "WEAK_TYPES", "ZERO_DERIVATIVE",
           "has_zero_derivative", "lowering", "nan_checked", "platform_rules"]
