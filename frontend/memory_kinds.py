"""Memory kinds: which memory of its device an array lives in ('device', 'pinned_host',
'unpinned_host'), and how programs name them. JAX: memory kinds of shardings,
jax.memory.Space, and the memory-kind attributes of the lowered main function.

    xh = device_put(x, SingleDeviceSharding(d, memory_kind="pinned_host"))
    jit(f, out_shardings=s_host)(x)     # result in pinned host memory

A program over arrays in host memory (or asked for host results) says so to XLA as JAX
does: `mhlo.memory_kind` on each argument and result of @main, and XLA's
`annotate_device_placement` custom call on each result whose memory kind `out_shardings`
gave. A device_put inside the program lowers to that custom call marked
`mjax.device_put` (passes/rules/structural.py); `annotate_text` reads the memory kinds
off the marked calls to find each result's memory kind and then removes them (JAX's
CPU lowering of device_put is the identity). Memory kinds flow as JAX's avals carry
them: an op's result is in the memory of its operands of rank > 0 (constants go with
any), and an elementwise op over host and device values is JAX's ValueError. An eager op
on an array in host memory runs as a jit of the op (frontend/eager.py), its uncommitted
operands going with the host ones.

Tracing knows a kind where it can (`known_kind`): a concrete array's, a traced function's
argument's (recorded from the arrays passed, staging.trace_function) and a device_put's
result's. device_put's transpose moves a cotangent back to host memory where tracing
knew the operand's kind there (`src`), and grad/vjp put the cotangent of a primal in
pinned host memory there (placement.cotangent_in_memory): JAX's cotangent has its
primal's type, also where the device_put sits in a scan or remat body, whose transpose
knows no source. `check_traced` raises the elementwise ValueError on the traced program,
before the passes drop unused ops (JAX checks while tracing; jnp.isclose's `and`).

Where mjax differs from JAX, whose avals carry memory spaces through everything: kinds
are found in @main only (values inside loop and branch bodies are not followed: a loop's
results are in its operands' memory); where JAX's grad rejects a cotangent in the wrong
memory, mjax's is in its primal's (and an unused host argument's zero is in host
memory, JAX's in device memory). On CPU every memory is host memory: XLA runs the same
code on any of them, so moving between memories never changes a value (as in JAX on
CPU).
"""
from __future__ import annotations

import enum

from jaxlib.mlir import ir

from mjax.dialect import ShapedArray, context
from mjax.dialect.types import dtype_of_element_type
from mjax.dialect.ops.structural import MEMORY_KINDS, DevicePutOp
from mjax.passes.ir_util import main_function
from mjax.passes.rules.structural import DEVICE_PUT_CALL, placement_call
from mjax.sharding_impls import HOST_MEMORY_IN_USE, SingleDeviceSharding

HOST_KINDS = tuple(k for k in MEMORY_KINDS if k != "device")
ANY = "any"     # (an argument that takes the memory of the values it meets)


def in_use() -> bool:
    """Whether this process has used a host memory kind (a sharding in host memory):
    until then a device_put inside a program to device memory stages nothing (as
    before), and jit calls skip every memory-kind step."""
    return HOST_MEMORY_IN_USE[0]


class MemorySpace(enum.Enum):
    """A memory space: JAX's jax.memory.Space (Device, Host = 'pinned_host', Any)."""
    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self):
        return f"MemorySpace.{self.name}"


Space = MemorySpace     # (JAX's public name: jax.memory.Space)


def kind_of_space(space: Space) -> str:
    """The memory kind a device_put to `space` places arrays in. JAX: mem_space_to_kind."""
    if space is Space.Device:
        return "device"
    if space is Space.Host:
        return "pinned_host"
    raise ValueError(f"device_put to {space!r}: an array must live in a definite memory "
                     f"space (MemorySpace.Device or MemorySpace.Host)")


def memory_kind_of(x) -> str:
    """The memory kind of an array (anything else: 'device')."""
    s = getattr(x, "_sharding", None)
    return getattr(s, "memory_kind", None) or "device"


def known_kind(x) -> str | None:
    """The memory kind tracing knows `x` to be in, host memory being in use (else None):
    a concrete array's; a traced value's where it is an argument of the function being
    traced (`memory_kinds` of its trace, which staging.trace_function records from the
    arguments) or a device_put's result. None where only the lowered program tells (a
    value computed in the program: `annotate_text`)."""
    if not HOST_MEMORY_IN_USE[0]:
        return None
    value = getattr(x, "value", None)
    if not isinstance(value, ir.Value):
        return memory_kind_of(x)
    owner = value.owner
    if isinstance(owner, ir.Block):
        kinds, trace = getattr(x.trace, "memory_kinds", None), x.trace
        n = ir.BlockArgument(value).arg_number
        return kinds[n] if kinds and n < len(kinds) and owner == trace.block else None
    op = getattr(owner, "operation", owner)
    if isinstance(op, ir.Operation) and op.name == DevicePutOp.OPERATION_NAME:
        return ir.StringAttr(op.attributes["memory_kind"]).value
    return None


def host_kinds(leaves) -> tuple | None:
    """The memory kind of each of `leaves` where one is in host memory, else None (a
    jit cache key's part: the same avals in other memories compile another program;
    None for an uncommitted array, which an eager op's program places otherwise)."""
    if not HOST_MEMORY_IN_USE[0]:
        return None
    kinds = tuple(None if getattr(x, "_sharding", None) is None else memory_kind_of(x)
                  for x in leaves)
    return kinds if any(k in HOST_KINDS for k in kinds) else None


def argument_kinds(leaves, shardings, uncommitted=None) -> list[str | None]:
    """The memory kind of each argument of a jit call: its array's, which the kind of its
    sharding in `in_shardings` (None where not given) must equal, as in JAX; for an
    uncommitted argument without one `uncommitted`: None (JAX names no memory kind for
    it: device memory) or ANY (an eager op's operand: the memory of the others)."""
    kinds = []
    for i, x in enumerate(leaves):
        have = memory_kind_of(x)
        want = getattr(shardings[i], "memory_kind", None) if shardings else None
        if want is None and getattr(x, "_sharding", None) is None:
            kinds.append(uncommitted)
            continue
        if want is not None and want != have and hasattr(x, "_sharding"):
            raise ValueError(f"Memory kinds passed to jax.jit does not match memory kind "
                             f"on the respective arg. Got jit memory kind: {want}, arg "
                             f"memory kind: {have} for arg type: {type_string(x.aval, have)}")
        kinds.append(want or have)
    return kinds


def result_shardings(executable) -> list:
    """The sharding of each result of a one-device program some of whose results are in
    host memory (None for those in device memory: the plain form)."""
    device = executable.devices[0]
    return [None if k == "device" else SingleDeviceSharding(device, memory_kind=k)
            for k in executable.out_memory_kinds]


def type_string(aval, kind: str) -> str:
    """An array type as JAX's avals print with their memory space: float32<host>[2,4]."""
    space = "<host>" if kind == "pinned_host" else ""
    return f"{aval.dtype.name}{space}[{','.join(map(str, aval.shape))}]"


def annotate_text(text: str, arg_kinds, out_kinds) -> str:
    """StableHLO text of a jit's program given the memory kinds of its arguments
    (`arg_kinds`, one per @main argument: None where unknown, an uncommitted array's)
    and the results' memory kinds `out_shardings` asked for (`out_kinds`, None where
    not given). Text without host memory anywhere comes back unchanged."""
    if DEVICE_PUT_CALL not in text and not _any_host(arg_kinds, out_kinds):
        return text
    with context():
        module = ir.Module.parse(text)
        annotate_module(module, arg_kinds, out_kinds)
        return str(module)


def annotate_module(module, arg_kinds, out_kinds) -> None:
    """annotate_text on a module, in place (Traced.lower's)."""
    with context():
        main = _main_if_in_use(module)
        if main is None:
            return
        kinds = _propagate(main, list(arg_kinds or ()),
                           any(k in HOST_KINDS for k in (out_kinds or ())))
        if kinds is not None:
            _set_attrs(main, kinds[0], kinds[1], list(out_kinds or ()))


def _main_if_in_use(module):
    """@main of `module` when this process uses host memory kinds, else None (in
    context())."""
    return main_function(module) if in_use() else None


def _memory(kind: str) -> str:
    """The memory a kind's value is in, as check_traced tells them apart."""
    return "pinned_host" if kind == "pinned_host" else "device"


def _any_host(arg_kinds, out_kinds) -> bool:
    return any(k in HOST_KINDS for k in list(arg_kinds or ()) + list(out_kinds or ()))


def _rank(value) -> int:
    try:
        return ir.RankedTensorType(value.type).rank
    except ValueError:    # (tokens, tuples)
        return 0


def _propagate(main, arg_kinds, asked_host: bool):
    """(argument kinds, result kinds) of @main, the marked device_put calls removed
    (everywhere); None when no memory is a host one (then nothing is annotated)."""
    block = main.regions[0].blocks[0]
    args = list(block.arguments)
    arg_kinds = (arg_kinds + [None] * len(args))[:len(args)]
    kind = {}
    for a, k in zip(args, arg_kinds):
        # (JAX's avals: unpinned host memory counts as device memory inside programs)
        kind[a] = None if k == ANY else "pinned_host" if k == "pinned_host" else "device"
    seen_host = asked_host or any(k in HOST_KINDS for k in arg_kinds)
    results = []
    for op in block.operations:
        if op.operation.name == "func.return":
            results = [kind.get(v) or "device" for v in op.operands]
            continue
        put = _marked_kind(op)
        if put is not None:
            seen_host |= put in HOST_KINDS
            kind[op.results[0]] = "pinned_host" if put == "pinned_host" else "device"
            continue
        # (constants and values made from them alone: None, any memory)
        ins = {kind.get(v) for v in op.operands if _rank(v) > 0} - {None}
        if len(ins) > 1:
            _check_same_memory(op, kind)
        out = ins.pop() if len(ins) == 1 else "device" if ins else None
        for r in op.results:
            kind[r] = out
    _strip_nested(main)
    if not seen_host:
        return None
    return arg_kinds, results


# StableHLO's elementwise ops with JAX's primitive names: mixing host and device memory
# in them is JAX's ValueError (its avals' memory spaces must agree).
_ELEMENTWISE = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div",
                "maximum": "max", "minimum": "min", "power": "pow", "remainder": "rem",
                "atan2": "atan2", "and": "and", "or": "or", "xor": "xor",
                "select": "select_n"}
_COMPARISONS = {"EQ": "eq", "NE": "ne", "LT": "lt", "LE": "le", "GT": "gt", "GE": "ge"}


_PRIMITIVES = frozenset(_ELEMENTWISE.values()) | frozenset(_COMPARISONS.values())


def check_traced(module, arg_kinds) -> None:
    """JAX's ValueError for an elementwise op of the traced program (jaxpr ops, before
    the passes drop unused ones: JAX checks as it traces) over values in host and in
    device memory, where the kinds are known from @main's arguments (`arg_kinds`, as
    annotate_text's) and device_puts; values of other ops (calls, loops, transforms)
    are left to annotate_text's walk of the lowered program."""
    with context():
        main = _main_if_in_use(module)
        if main is None:
            return
        args = list(main.regions[0].blocks[0].arguments)
        arg_kinds = (list(arg_kinds or ()) + [None] * len(args))[:len(args)]
        kind = {a: None if k == ANY else _memory(k) for a, k in zip(args, arg_kinds)}
        for op in main.regions[0].blocks[0].operations:
            op = op.operation
            name = op.name
            if name == DevicePutOp.OPERATION_NAME:
                kind[op.results[0]] = _memory(ir.StringAttr(op.attributes["memory_kind"]).value)
                continue
            ranked = [v for v in op.operands if _rank(v) > 0]
            if not name.startswith("jaxpr.") or len(op.regions) or \
                    "callee" in op.attributes or any(v not in kind for v in ranked):
                continue        # (results of unknown memory)
            ins = {kind[v] for v in ranked} - {None}
            if len(ins) > 1 and name.split(".", 1)[-1] in _PRIMITIVES:
                _check_operands(name.split(".", 1)[-1], op, kind)
            for r in op.results:
                kind[r] = ins.pop() if len(ins) == 1 else "device" if ins else None


def _check_same_memory(op, kind) -> None:
    """JAX's ValueError for an elementwise op over values in host and in device memory."""
    name = op.operation.name.split(".", 1)[-1]
    if name == "compare":
        text = str(op.attributes["comparison_direction"])
        prim = next((p for d, p in _COMPARISONS.items() if d in text), None)
    else:
        prim = _ELEMENTWISE.get(name)
    if prim is not None:
        _check_operands(prim, op, kind)


def _check_operands(prim: str, op, kind) -> None:
    prev = None
    for v in op.operands:
        if _rank(v) == 0:
            continue
        if prev is not None and kind.get(prev) is not None and kind.get(v) is not None \
                and kind[prev] != kind[v]:
            raise ValueError(f"memory_space of all inputs passed to `{prim}` must be the "
                             f"same. Got one operand with type: {_type_of(prev, kind)} "
                             f"and another operand with type: {_type_of(v, kind)}")
        prev = v


def _type_of(value, kind) -> str:
    t = ir.RankedTensorType(value.type)
    aval = ShapedArray(t.shape, dtype_of_element_type(t.element_type))
    return type_string(aval, kind[value])


def _marked_kind(op):
    if op.operation.name != "stablehlo.custom_call" or \
            DEVICE_PUT_CALL not in op.attributes:
        return None
    fa = ir.DictAttr(op.attributes["mhlo.frontend_attributes"])
    return ir.StringAttr(fa["_xla_buffer_placement"]).value


def _strip_nested(op):
    """Removes the marked device_put calls in the regions of `op` (loop and branch
    bodies: the memory kinds of their values stay inside)."""
    for region in op.regions:
        for b in region.blocks:
            for inner in list(b.operations):
                if _marked_kind(inner) is not None:
                    inner.results[0].replace_all_uses_with(inner.operands[0])
                    inner.operation.erase()
                else:
                    _strip_nested(inner)


def _set_attrs(main, arg_kinds, result_kinds, out_kinds):
    """`mhlo.memory_kind` on every argument and result; the results out_shardings gave a
    memory kind are moved there by XLA's annotate_device_placement (JAX:
    mlir.wrap_with_memory_kind)."""
    block = main.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    out_kinds = (out_kinds + [None] * len(result_kinds))[:len(result_kinds)]
    final = [o or r for o, r in zip(out_kinds, result_kinds)]
    main.attributes["arg_attrs"] = _with_kinds(main, "arg_attrs", arg_kinds)
    main.attributes["res_attrs"] = _with_kinds(main, "res_attrs", final)
    with ir.InsertionPoint(ret), ret.location:
        for i, k in enumerate(out_kinds):
            if k is not None:
                ret.operands[i] = placement_call(ret.operands[i], k, marked=False)


def _with_kinds(main, name: str, kinds) -> ir.ArrayAttr:
    old = list(ir.ArrayAttr(main.attributes[name])) if name in main.attributes else []
    old += [ir.DictAttr.get({})] * (len(kinds) - len(old))
    out = []
    for attrs, k in zip(old, kinds):
        d = {a.name: a.attr for a in ir.DictAttr(attrs)}
        if k not in (None, ANY):
            d["mhlo.memory_kind"] = ir.StringAttr.get(k)
        out.append(ir.DictAttr.get(d))
    return ir.ArrayAttr.get(out)
