"""Memory kinds: which memory of its device an array lives in ('device', 'pinned_host',
'unpinned_host'), and how programs name them. JAX: memory kinds of shardings,
jax.memory.Space, and the memory-kind attributes of the lowered main function.

    xh = device_put(x, SingleDeviceSharding(d, memory_kind="pinned_host"))
    jit(f, out_shardings=s_host)(x)     # result in pinned host memory

A program over arrays in host memory (or asked for host results) says so to XLA as JAX
does: `mhlo.memory_kind` on each argument and result of @main, and XLA's
`annotate_device_placement` custom call on each result whose memory kind `out_shardings`
gave. A device_put inside the program lowers to that custom call marked
`mjax.device_put` (passes/rules/structural.py); the pass --stablehlo-memory-kinds
(`memory_kinds_pass`) reads the memory kinds off the marked calls to find each result's
memory kind and then removes them (JAX's CPU lowering of device_put is the identity; on
a TPU or GPU, where a memory is a host one, they stay XLA's placement calls, as JAX's).
Memory kinds flow as JAX's avals carry them: an op's result is in the memory of its
operands of rank > 0 (constants go with any), and an elementwise op over host and device
values is JAX's ValueError. An eager op on an array in host memory runs as a jit of the
op (frontend/arrays/eager.py), its uncommitted operands going with the host ones.

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

from mjax.dialect.ops.structural import DevicePutOp
from mjax.dialect.values import argument_number, defining_op, is_value, string_attr
from mjax.passes.stablehlo_memory_kinds import (ANY, HOST_KINDS,  # noqa: F401
                                                StablehloMemoryKindsPass, type_string)
from mjax.passes.traced_memory_kinds import check_main
from mjax.runtime.backend import platform_record
from mjax.specs.sharding_impls import HOST_MEMORY_IN_USE, SingleDeviceSharding


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
    value computed in the program: --stablehlo-memory-kinds)."""
    if not HOST_MEMORY_IN_USE[0]:
        return None
    value = getattr(x, "value", None)
    if not is_value(value):
        return memory_kind_of(x)
    n = argument_number(value)
    if n is not None:
        kinds, trace = getattr(x.trace, "memory_kinds", None), x.trace
        return kinds[n] if kinds and n < len(kinds) and value.owner == trace.block else None
    op = defining_op(value)
    if op.name == DevicePutOp.OPERATION_NAME:
        return string_attr(op, "memory_kind")
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


def buffer_kinds(bufs, backend) -> tuple | None:
    """The memory kind of each of the buffers `bufs` of `backend` handed to a program,
    host memory being in use (else None): what its parameters must be compiled for (a
    TPU refuses a buffer in another memory: E0102 RuntimeProgramInputMismatch). For the
    programs mjax compiles from a traced function's parts (an eager vjp's forward and
    linear parts), whose arguments' memory the buffers alone tell."""
    kind = getattr(backend, "memory_kind", None)
    if not HOST_MEMORY_IN_USE[0] or kind is None:
        return None
    return tuple(kind(b) for b in bufs)


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


def memory_kinds_pass(arg_kinds, out_kinds,
                      platform=None) -> StablehloMemoryKindsPass | None:
    """--stablehlo-memory-kinds for a jit's lowered program, given the memory kinds of its
    arguments (`arg_kinds`, one per @main argument: None where unknown, an uncommitted
    array's) and the results' kinds `out_shardings` asked for (`out_kinds`, None where
    not given); None while this process uses no host memory (nothing to write).
    `platform`: the one lowered for (default: `target_platform()`), whose record says
    whether device_puts stay XLA's placement calls (JAX's TPU and GPU lowering)."""
    if not in_use():
        return None
    return StablehloMemoryKindsPass(
        arg_kinds=tuple(arg_kinds or ()), out_kinds=tuple(out_kinds or ()),
        keep_puts=platform_record(platform).device_put_moves)


def check_traced(module, arg_kinds) -> None:
    """JAX's ValueError for an elementwise op of the traced program over values in host
    and in device memory (mjax.passes.traced_memory_kinds.check_main), while this
    process uses host memory kinds."""
    if in_use():
        check_main(module, arg_kinds)


