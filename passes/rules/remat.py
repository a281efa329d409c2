"""Selective rematerialization: which values of a checkpointed function reverse mode saves.

A `checkpoint` with a selective policy (dots, names) is linearized inline; every op its
JVP emits belongs to one `Region`, and partial evaluation (passes/partial_eval.py) asks
the region what to do when a linear op of the region reads a known (primal) value:

    f(x) = sin(dot(sin(x), w))        policy dots_saveable
    primal ops:   %a = sin(x)   recompute      %d = dot(%a, w)   saveable
                  %y = sin(%d)  recompute      %c = cos(%d)      recompute
    linear ops read %a (dot's transpose) and %c (sin's):
        %c -> recomputed in the linear part from %d, which is saved (a residual)
        %a -> recomputed from x (a residual: an input of the checkpoint)

Outputs of saveable ops become residuals; the others are cloned into the linear part
(recomputed in the backward pass), back to the saveable values and the checkpoint's
inputs they read, which are residuals. A known value read from outside the region, or a
region value read by a linear op outside it, is a plain residual. With `prevent_cse`
the residuals a recomputation reads go through an optimization barrier, so CSE after
inlining cannot merge the recomputation with the forward pass.

JAX: partial_eval_jaxpr_custom with the policy as `saveable` (known non-saveable
equations are staged again, their outputs "instantiated"), in remat_partial_eval.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.types import aval_of

SELECTIVE = ("dots_saveable", "dots_with_no_batch_dims_saveable", "save_only_these_names",
             "save_any_names_but_these", "save_anything_except_these_names",
             "dots_or_names", "callable")

# Python callables given as policies (JAX: any `policy(prim, *avals, **params)`): a
# checkpoint op names one by its key in `names` ("policy = 'callable', names = ['3']").
_CALLABLES: dict[str, object] = {}


def register_callable_policy(fn) -> str:
    """The key under which the pass finds the Python policy `fn` (one per callable)."""
    for key, known in _CALLABLES.items():
        if known is fn:
            return key
    key = str(len(_CALLABLES))
    _CALLABLES[key] = fn
    return key


# The built-in policies by name (frontend/ad/checkpoint_policies.py fills it): the
# printer shows these as the functions JAX's are.
NAMED_POLICIES: dict[str, object] = {}


def callable_policy(key: str):
    """The Python policy registered under `key`."""
    return _CALLABLES[key]


class OpPrimitive:
    """What a Python policy sees of an op: JAX's primitive name (`str(prim)`,
    `prim.name`): the op's name without the dialect, `name` for checkpoint_name."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return getattr(other, "name", other) == self.name

    def __hash__(self):
        return hash(self.name)


def _call_policy(op, key: str) -> bool:
    fn = _CALLABLES.get(key)
    if fn is None:
        raise ValueError(f"checkpoint policy 'callable' #{key} is not a Python callable "
                         f"registered in this process")
    name = op.name.split(".", 1)[-1]
    prim = OpPrimitive("name" if name == "checkpoint_name" else name)
    avals = [aval_of(v.type) for v in op.operands]
    saved = fn(prim, *avals, **op.opview.params)
    kind = type(saved).__name__
    # (Offloadable(src, dst): saved, in device memory; on CPU JAX's offloading device_put
    # lowers to nothing, so the program is JAX's. RecomputeType: JAX's Recompute.)
    if kind in ("Offloadable", "SaveableType"):
        return True
    return kind not in ("Recompute", "RecomputeType") and bool(saved)


def _is_dot(op, no_batch_dims: bool) -> bool:
    if op.name == "jaxpr.conv_general_dilated":   # JAX's dots_saveable keeps convs too
        return not no_batch_dims
    if op.name != "jaxpr.dot_general":
        return False
    (_, batch) = op.opview.params["dimension_numbers"]
    return not no_batch_dims or not any(len(b) for b in batch)


def saveable(op, policy: str, names=()) -> bool:
    """Whether `policy` lets reverse mode save op's results."""
    name = op.opview.params["name"] if op.name == "jaxpr.checkpoint_name" else None
    if policy == "dots_saveable":
        return _is_dot(op, False)
    if policy == "dots_with_no_batch_dims_saveable":
        return _is_dot(op, True)
    if policy == "save_only_these_names":
        return name is not None and name in names
    if policy == "save_any_names_but_these":
        return name is not None and name not in names
    if policy == "save_anything_except_these_names":
        # JAX 0.10.2's policy saves everything, the names notwithstanding (its source
        # says the policy "probably just doesn't work"); mjax saves what JAX saves.
        return True
    if policy == "dots_or_names":
        return _is_dot(op, False) or (name is not None and name in names)
    if policy == "callable":
        return _call_policy(op, names[0])
    raise ValueError(f"not a selective remat policy: {policy}")


class Region:
    """The ops one selective checkpoint's linearization emitted, and which of them are
    recomputed in the backward pass rather than saved."""

    __slots__ = ("prevent_cse", "recompute")

    def __init__(self, prevent_cse: bool):
        self.prevent_cse = prevent_cse
        self.recompute: set[ir.Operation] = set()


def mark_region(regions: dict, ops, policy: str, names, prevent_cse: bool) -> None:
    """Records `ops` (emitted by linearizing one checkpoint) as one region in `regions`
    (op -> Region). Checkpoints nested in a selective one are linearized inline and
    their ops marked with it: the outermost policy decides, as JAX's partial evaluation
    of the outer checkpoint applies its policy to the equations of the inner one."""
    region = Region(prevent_cse)
    for op in ops:
        regions[op] = region
        if not saveable(op, policy, tuple(names or ())):
            region.recompute.add(op)


def recomputed_by(regions: dict, consumer, value: ir.Value):
    """The region that recomputes `value` for `consumer` (an op of the linearized
    block), or None when `value` is saved."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    producer = owner.operation
    region = regions.get(producer)
    if region is None or producer not in region.recompute:
        return None
    return region if regions.get(consumer) is region else None
