"""`--jaxpr-to-stablehlo`: replace every `jaxpr` op with StableHLO/CHLO ops.

    %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  ==>
    %0 = stablehlo.sine %x : tensor<3xf32>

Rules live in `passes/rules/<family>.py` (table `LOWER`). An op without a rule, or an
unexpanded transformation op (`jaxpr.jvp`, ...), is an error naming the op and its line.
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir

from mjax.dialect.core import OPS
from mjax.dialect.ops import structural as S
from mjax.dialect.types import aval_of, symbolic_types_made
from mjax.passes.ir_util import child_ops
from mjax.passes.registry import Pass, PassError, op_error, register_pass
from mjax.passes.rules import elementwise as elementwise_rules
from mjax.passes.rules import structural as structural_rules
from mjax.passes.rules.ad_util import ADD_ANY
from mjax.passes.rules.callbacks import thread_tokens
from mjax.passes.rules.dynamic_shapes import make_dynamic, strip_encodings
from mjax.passes.rules.op_names import JIT_NAMES, OP_NAME_PREFIX, SCOPES
from mjax.passes.rules.tables import AFTER_LOWERING, LOWER, LOWERING_PLATFORM, LowerCtx
from mjax.passes.rules.xla_metadata import attach_block_tags


# ---- op names ----------------------------------------------------------------------
# As JAX does, each op of a jit's program is named after its primitive under the jit's
# name and the enclosing named_scopes ("jit(f)/scope/sin"): XLA names the HLO instruction
# by the last part (sin.1) and keeps the path as its op_name metadata. The prefix is set
# per run from the module's name (@jit_f); other modules' ops keep their locations.
# (OP_NAME_PREFIX, SCOPES and the names of ops in bodies: passes/rules/op_names.py.)


_NAMED: dict = {}   # (prefix, JAX name, location attribute) -> the named location


def _named(op: ir.Operation, cls) -> ir.Location:
    loc = op.location
    prefix = OP_NAME_PREFIX.get()
    if prefix is None:
        return loc
    name = cls.jax_name
    if name == "add" and ADD_ANY in op.attributes:
        name = "add_any"      # (a sum of cotangents: JAX's add_any)
    # (Ops traced at one line share their location: its named form is made once.)
    attr = loc.attr
    key = (prefix, name, attr)
    named = _NAMED.get(key)
    if named is None:
        scope = SCOPES.get(attr) if SCOPES else None
        if scope is not None:
            name = f"{scope}/{name}"
        named = ir.Location.name(prefix + name, childLoc=loc)
        if len(_NAMED) >= 4096:
            _NAMED.clear()
        _NAMED[key] = named
    return named


def _prefix_of(module: ir.Module) -> str | None:
    attrs = module.operation.attributes
    if "sym_name" not in attrs:
        return None
    name = ir.StringAttr(attrs["sym_name"]).value
    return f"jit({JIT_NAMES.get(name, name[4:])})/" if name.startswith("jit_") else None


def lower_op(op: ir.Operation, backend: str = "xla") -> None:
    cls = OPS.get(op.name)     # (a jaxpr op's class: no OpView made)
    if cls is None:
        raise op_error(op, "is not a known jaxpr op")
    rule = LOWER.get(cls)
    if rule is None:
        raise op_error(op, f"jaxpr-to-stablehlo: {LOWER.why(cls)}")
    # (avals read when asked; rules of ops with regions lower their bodies through ctx)
    ctx = LowerCtx(op=op, backend=backend, loc=op.location, lowering=_WALK)
    try:
        with _named(op, cls), ir.InsertionPoint(op):
            results = rule(ctx, *op.operands, **cls.params_of(op))
    except (PassError, NotImplementedError):
        raise
    except (TypeError, ValueError, OverflowError, ir.MLIRError) as e:
        # (OverflowError: an attribute past what the lowering's integer types hold,
        # such as a scan length over int32's range.)
        raise op_error(op, f"jaxpr-to-stablehlo: lowering failed: {e}") from None
    if isinstance(results, ir.Value):
        results = [results]
    results = list(results)
    if len(results) != len(op.results):
        raise op_error(op, f"lowering rule returned {len(results)} values for "
                           f"{len(op.results)} results")
    # (Encodings exist only once symbolic dimensions were made or read, which `run`
    # relies on too: without them, no type is read here.)
    symbolic = symbolic_types_made()
    for old, new in zip(op.results, results):
        if symbolic and new.type != old.type and isinstance(
                old.type, ir.RankedTensorType) and old.type.encoding is not None:
            # (StableHLO's type inference copies an operand's encoding, which spells its
            # symbolic dimensions, onto results of other shapes: the op's own type is the
            # right one)
            new.set_type(old.type)
        old.replace_all_uses_with(new)
    op.erase()


@register_pass("jaxpr-to-stablehlo")
@dataclass
class JaxprToStablehloPass(Pass):
    """Lower every jaxpr op to StableHLO/CHLO (fails on ops it cannot lower).
    `platform=cpu`: refuse what XLA's CPU backend would silently compute otherwise (dot
    algorithms it ignores), as JAX does when lowering for a CPU; `platform=cuda`/`rocm`:
    linalg calls the GPU solvers (cuSOLVER/hipSOLVER) instead of LAPACK."""

    backend: str = "xla"
    platform: str = ""

    def run(self, module: ir.Module) -> None:
        token = LOWERING_PLATFORM.set(self.platform)
        names = OP_NAME_PREFIX.set(_prefix_of(module))
        cleanups = AFTER_LOWERING.set([])
        try:
            lower_nested(module.operation, self.backend)
            for cleanup in AFTER_LOWERING.get():
                cleanup()
        finally:
            LOWERING_PLATFORM.reset(token)
            OP_NAME_PREFIX.reset(names)
            AFTER_LOWERING.reset(cleanups)
        # Ordered host callbacks: one token chain per function, through control flow.
        thread_tokens(module)
        # Ops traced under `with set_xla_metadata(...)`: their frontend attributes.
        attach_block_tags(module)
        if symbolic_types_made():
            make_dynamic(module.operation)
            strip_encodings(module.operation)


def lower_nested(root: ir.Operation, backend: str = "xla") -> None:
    """Lowers the jaxpr ops nested under `root`. The bodies of jaxpr ops with regions
    (cond/while/scan) are left to those ops' rules, which lower them recursively."""
    # (Per run: a rule replaced in LOWER since, as tests do, turns its fast path off.)
    fast = {cls: rewrite for cls, (rule, rewrite) in _fast_rules().items()
            if LOWER.get(cls) is rule}
    get = OPS.get
    for op in child_ops(root):
        name = op.name
        cls = get(name)     # (the op's class from its name: no OpView made)
        if cls is not None:
            rule = fast.get(cls)
            if rule is not None and rule(op):
                continue
        if name.startswith("jaxpr."):
            lower_op(op, backend)
        elif len(op.regions):
            lower_nested(op, backend)


class _Walk:
    """This pass's walk, as lowering rules of ops with regions reach it
    (`LowerCtx.lower_nested`, `LowerCtx.lower_op`)."""

    lower_nested = staticmethod(lower_nested)
    lower_op = staticmethod(lower_op)


_WALK = _Walk()


# ---- the fast path -----------------------------------------------------------------
# Most ops of a traced program are elementwise ops, constants and broadcasts whose
# StableHLO op has the same operands and result types and at most a copied attribute.
# These are rewritten here without a rule call, LowerCtx or attribute decoding: the
# same StableHLO op, the same location, so the output is identical to the rule's.
# An op that does not have exactly the expected form (operand count, attributes) takes
# the rule path, which reports what is wrong with it.

def _replace(op: ir.Operation, cls, name: str, attributes=None, result=None) -> bool:
    if result is None:
        result = op.result
    new = ir.Operation.create(name, results=[result.type], operands=list(op.operands),
                              attributes=attributes, loc=_named(op, cls),
                              ip=ir.InsertionPoint(op))
    result.replace_all_uses_with(new.result)
    op.erase()
    return True


def _same_form(cls, name: str):
    n = cls.num_operands

    def rule(op: ir.Operation) -> bool:
        if len(op.operands) != n:
            return False
        try:
            result = op.result          # (ValueError unless exactly one result)
        except ValueError:
            return False
        return _replace(op, cls, name, result=result)
    return rule


def _constant(op: ir.Operation) -> bool:
    attrs = op.attributes
    if len(op.results) != 1 or len(op.operands) or "value" not in attrs:
        return False
    value = attrs["value"]
    if not isinstance(value, ir.DenseElementsAttr) or value.type != op.result.type:
        return False
    try:
        aval_of(value.type)      # (a type mjax supports, as the rule's decoding asks)
    except TypeError:
        return False
    return _replace(op, S.ConstantOp, "stablehlo.constant", {"value": value})


def _broadcast_in_dim(op: ir.Operation) -> bool:
    attrs = op.attributes
    if len(op.operands) != 1 or len(op.results) != 1 or "shape" not in attrs or \
            "broadcast_dimensions" not in attrs:
        return False
    dims = attrs["broadcast_dimensions"]
    if not (isinstance(dims, ir.DenseI64ArrayAttr)
            and isinstance(attrs["shape"], ir.DenseI64ArrayAttr)):
        return False
    try:
        aval_of(op.result.type)  # (the rule builds its result type from the aval)
    except TypeError:
        return False
    return _replace(op, S.BroadcastInDimOp, "stablehlo.broadcast_in_dim",
                    {"broadcast_dimensions": dims})


def _static_result(op: ir.Operation):
    """op's one result when it has one operand and one result of a static shape mjax
    supports (the rules build their result types from the aval), else None."""
    if len(op.operands) != 1 or len(op.results) != 1:
        return None
    result = op.result
    try:
        aval = aval_of(result.type)
    except TypeError:
        return None
    return result if all(type(d) is int for d in aval.shape) else None


def _reshaping(cls):
    """reshape (without `dimensions`), squeeze, expand_dims -> stablehlo.reshape."""
    plain = cls is S.ReshapeOp

    def rule(op: ir.Operation) -> bool:
        if plain and "dimensions" in op.attributes:
            return False
        result = _static_result(op)
        return result is not None and _replace(op, cls, "stablehlo.reshape", result=result)
    return rule


def _expand_dims(op: ir.Operation) -> bool:
    """expand_dims -> stablehlo.broadcast_in_dim keeping the operand's dims (JAX's)."""
    dims = op.attributes["dimensions"] if "dimensions" in op.attributes else None
    if not isinstance(dims, ir.DenseI64ArrayAttr):
        return False
    result = _static_result(op)
    if result is None:
        return False
    new = set(dims)
    kept = [d for d in range(ir.RankedTensorType(result.type).rank) if d not in new]
    return _replace(op, S.ExpandDimsOp, "stablehlo.broadcast_in_dim",
                    {"broadcast_dimensions": ir.DenseI64ArrayAttr.get(kept)}, result)


def _transpose(op: ir.Operation) -> bool:
    attrs = op.attributes
    if "permutation" not in attrs or not isinstance(attrs["permutation"],
                                                    ir.DenseI64ArrayAttr):
        return False
    result = _static_result(op)
    return result is not None and _replace(op, S.TransposeOp, "stablehlo.transpose",
                                           {"permutation": attrs["permutation"]}, result)


_FAST: dict = {}


def _fast_rules() -> dict:
    """jaxpr op class -> (the rule it stands for, its fast rewrite: True when done), built
    on first use from the elementwise family's one-to-one table (each builder names its
    op class) and the structural rules for constants and broadcasts."""
    if not _FAST:
        for cls, build in elementwise_rules._ONE_TO_ONE.items():
            target = build.__globals__.get(build.__code__.co_names[0])
            name = getattr(target, "OPERATION_NAME", None)
            rule = LOWER.get(cls)
            # Only ops with no parameters, lowered by the one-to-one rule.
            if name and not cls.attributes and cls.num_operands and \
                    getattr(rule, "one_to_one", False):
                _FAST[cls] = (rule, _same_form(cls, name))
        _FAST[S.ConstantOp] = (structural_rules._constant_lower, _constant)
        _FAST[S.BroadcastInDimOp] = (structural_rules._broadcast_in_dim_lower,
                                     _broadcast_in_dim)
        _FAST[S.ReshapeOp] = (structural_rules._reshape_lower, _reshaping(S.ReshapeOp))
        _FAST[S.SqueezeOp] = (structural_rules._squeeze_lower, _reshaping(S.SqueezeOp))
        _FAST[S.ExpandDimsOp] = (structural_rules._expand_dims_lower, _expand_dims)
        _FAST[S.TransposeOp] = (structural_rules._transpose_lower, _transpose)
    return _FAST
