"""The named scopes a Pallas TPU kernel's op is lowered under, as JAX's lowering brackets
its ops with `tpu.trace_start` / `tpu.trace_stop`: each equation's name stack flattened,
scope names and the names of the transformations applied inside the kernel ("vmap") in
the order they were entered.

    with jax.named_scope("outer"):          trace_start "outer"
        jax.vmap(f)(x)  # f: named "inner"    trace_start "vmap", trace_start "inner"

mjax names a transformed op by wrapping the head of its path (`vmap(outer)/inner`,
passes/name_stacks.py), which no longer says where the transformation was entered; the
op that called the transformed body does (its own path, `outer`). So an op's stack is
its caller's stack, then the transformations the caller's path does not have, then the
names below the caller's. Transformations of the whole kernel (vmap of a pallas_call)
are none of the kernel's: the kernel starts from its call's names.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.passes.rules.op_names import SCOPES, TRANSFORMS


def parse(path: str | None) -> tuple[tuple, tuple]:
    """(the transformations wrapping the path's head, outermost first; the names)."""
    if not path:
        return (), ()
    head, *rest = path.split("/")
    transforms = []
    while True:
        name, paren, inner = head.partition("(")
        if not (paren and name in TRANSFORMS and inner.endswith(")")):
            break
        transforms.append(name)
        head = inner[:-1]
    return tuple(transforms), tuple(n for n in (head, *rest) if n)


class Scopes(tuple):
    """A flat stack of scope and transformation names, outermost first, with the parsed
    path of the op it belongs to (what the ops of its bodies are relative to)."""

    transforms: tuple = ()
    names: tuple = ()

    @classmethod
    def of(cls, stack, transforms, names) -> "Scopes":
        s = cls(stack)
        s.transforms, s.names = tuple(transforms), tuple(names)
        return s


def kernel_root(call: ir.Operation) -> Scopes:
    """The stack a kernel's ops are relative to: its pallas_call's names (JAX traces the
    kernel outside the caller's transformations)."""
    _, names = parse(SCOPES.get(call.location.attr))
    return Scopes.of(names, (), names)


def op_stack(op: ir.Operation, caller: Scopes) -> Scopes:
    """`op`'s stack, lowered in a body called by the op whose stack is `caller`."""
    transforms, names = parse(SCOPES.get(op.location.attr))
    t, n = caller.transforms, caller.names
    if transforms[:len(t)] == t and names[:len(n)] == n:
        stack = (*caller, *transforms[len(t):], *names[len(n):])
    else:                    # (not below its caller: its names as traced)
        stack = names
    return Scopes.of(stack, transforms, names)
