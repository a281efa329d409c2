"""XLA frontend attributes (`mhlo.frontend_attributes`), as jax.experimental.xla_metadata
sets them, in two forms:

- A value tag: `jaxpr.xla_metadata_value {xla_metadata_kvs}`, an identity whose lowering
  puts the attributes on the StableHLO op that defines its operand.
- A block tag: ops traced inside `with set_xla_metadata(...)` carry the attributes in
  their location, a fused location whose metadata is `{mhlo.frontend_attributes = {...}}`:

      %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
               loc(fused<{mhlo.frontend_attributes = {_xla_log = "true"}}>["f.py":3:7])

  Passes give the ops they derive from an op that op's location (a JVP, a transpose, a
  batched op), so derived ops keep the tag, as JAX's do. After lowering,
  `attach_block_tags` copies each tagged StableHLO op's attributes from its location.
  Locations are text in the IR, so a hand-written module can tag its ops the same way.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.ops import transforms as T
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import batch_util as B
from mjax.passes.rules.tables import lowering

ATTR = "mhlo.frontend_attributes"
_MARK = "fused<{" + ATTR + " = "

# Whether any block tag was made in this process (set by `tag_location`, or by a driver
# reading IR text that has one): lowering walks its output for tags only then.
USED = [False]


def attribute_text(value) -> str:
    """A metadata value as XLA's frontend attribute string (JAX's spelling: bools in
    lower case)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _strings(kvs, context=None) -> dict:
    return {k: ir.StringAttr.get(attribute_text(v), context=context) for k, v in kvs}


def tag_location(loc: ir.Location, kvs) -> ir.Location:
    """`loc` tagged with the metadata `kvs` ((key, value) pairs)."""
    USED[0] = True
    ctx = loc.context
    tag = ir.DictAttr.get({ATTR: ir.DictAttr.get(_strings(kvs, ctx), context=ctx)},
                          context=ctx)
    return ir.Location.fused([loc], tag, context=ctx)


def _tag_of(loc: ir.Location) -> ir.DictAttr | None:
    """The frontend attributes a location carries (the innermost tag's), or None."""
    text = str(loc)
    start = text.rfind(_MARK)
    if start < 0:
        return None
    start += len(_MARK)
    depth, i, quoted = 0, start, False
    while i < len(text):
        c = text[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return ir.DictAttr(ir.Attribute.parse(text[start:i + 1]))
        i += 1
    return None


def _merge(op: ir.Operation, new: dict) -> None:
    """Adds `new` ({name: StringAttr}) to op's frontend attributes (the op's own win)."""
    merged = dict(new)
    if ATTR in op.attributes:
        merged.update({a.name: a.attr for a in ir.DictAttr(op.attributes[ATTR])})
    op.attributes[ATTR] = ir.DictAttr.get(merged)


def attach_block_tags(module: ir.Module) -> None:
    """Gives every non-jaxpr op whose location is tagged the tag's frontend attributes."""
    if not USED[0]:
        return

    def visit(op):
        if not op.name.startswith(("jaxpr.", "func.", "builtin.")):
            tag = _tag_of(op.location)
            if tag is not None:
                _merge(op, {a.name: a.attr for a in tag})
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)


# ---- the value tag ------------------------------------------------------------------------
@lowering(T.XlaMetadataValueOp)
def _value_lower(ctx, x, *, xla_metadata_kvs):
    owner = getattr(x.owner, "operation", x.owner)   # (a block argument has no op: no tag)
    if isinstance(owner, ir.Operation) and xla_metadata_kvs:
        _merge(owner, _strings(xla_metadata_kvs))
    return x


# Linear: its tangent is tagged as it is; the cotangent passes untagged (JAX's rules).
AD.deflinear(T.XlaMetadataValueOp, lambda b, ct, x, *, xla_metadata_kvs: [ct])
B.defvectorized(T.XlaMetadataValueOp)
