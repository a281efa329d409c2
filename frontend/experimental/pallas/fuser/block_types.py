"""The fuser's block-spec propagation objects and rule tables.

A `BlockIndexTransform` says how a value of a fused function is blocked: its block shape,
and a function from the block indices of the function's outputs (one tuple per output
BlockSpec) to this value's block indices. Pulling walks a jaxpr backwards from the
outputs' BlockSpecs with one rule per primitive (`PULL_RULES`); the kernel-side function
evaluates each equation on blocks (`EVAL_RULES`); `USAGE_RULES` find the values that are
only used as scalar indices (scalar prefetch); `PUSH_RULES` carry BlockSpecs forward.
JAX: pallas/fuser/block_spec.py.
"""
from __future__ import annotations

import contextlib
import dataclasses
import enum
import threading
from typing import Any, Callable, Sequence

from mjax.experimental.pallas.core import Blocked, BoundedSlice, Element, Squeezed


def _null_block_index_transform(*block_indices):
    del block_indices
    return None


@dataclasses.dataclass
class BlockIndexTransform:
    """A value's block shape and its block indices as a function of the outputs' block
    indices. JAX: fuser.BlockIndexTransform."""
    block_shape: Sequence[Any] | None
    block_index_transform: Callable[..., Any] = _null_block_index_transform
    memory_space: Any | None = dataclasses.field(kw_only=True, default=None)
    pipeline_mode: Any | None = dataclasses.field(kw_only=True, default=None)

    def replace(self, **kwargs):
        return dataclasses.replace(self, **kwargs)


class NoBlockIndexTransform:
    """A value no output's block depends on (a literal, a scalar index)."""

    def __repr__(self):
        return "NoBlockIndexTransform"


no_block_index_transform = NoBlockIndexTransform()
ILLEGAL = object()     # (a value two uses block differently: the fusion is a DAG)


class Usage(enum.Enum):
    REGULAR = 0
    SCALAR_PREFETCH = 1


@dataclasses.dataclass
class PullRuleContext:
    avals_in: tuple
    avals_out: tuple
    out_usages: tuple
    scalar_prefetch_handler: Any | None
    grid_len: int | None
    strict_mode: bool = True
    scalar_prefetch_fn: Any = dataclasses.field(default=None)
    literal_operands: tuple = ()        # (whether each operand is a literal)


@dataclasses.dataclass
class PushRuleContext:
    avals_in: tuple
    avals_out: tuple


@dataclasses.dataclass
class UsageRuleContext:
    avals_in: tuple
    avals_out: tuple


@dataclasses.dataclass(frozen=True)
class KernelEvalContext:
    scalar_prefetch: Any
    program_ids: tuple | None
    avals_in: tuple
    avals_out: tuple
    in_block_specs: tuple
    out_block_specs: tuple
    grid_len: int | None
    scalar_prefetch_handler: Any | None
    out_usages: tuple | None

    def get_program_ids(self):
        if self.program_ids is None:
            raise ValueError("Program ids not available.")
        return self.program_ids

    def _indices(self, specs):
        with scalar_prefetch_context(*(self.scalar_prefetch or ())):
            return tuple(None if getattr(s, "index_map", None) is None
                         else s.index_map(*self.get_program_ids()) for s in specs)

    def get_in_block_indices(self):
        return self._indices(self.in_block_specs)

    def get_out_block_indices(self):
        return self._indices(self.out_block_specs)


PULL_RULES: dict = {}
PUSH_RULES: dict = {}
EVAL_RULES: dict = {}
USAGE_RULES: dict = {}
# (primitives whose pull rule reads its scalar operands, ctx.scalar_prefetch_fn, even when
# they are all literals: a dynamic_slice at constant starts, as a Ref read ref[3] is)
SCALAR_OPERAND_RULES: set = set()


def block_size(dim) -> int | None:
    """The number of elements a block dimension spans (None: squeezed)."""
    if isinstance(dim, (Element, BoundedSlice, Blocked)):
        return dim.block_size
    if dim is None or isinstance(dim, Squeezed):
        return None
    return dim


def is_squeezed(dim) -> bool:
    return dim is None or isinstance(dim, Squeezed)


# ---- the scalar-prefetch values of the kernel instance being computed ----------------
class _SpEnv(threading.local):
    scalar_prefetch = None


_SP = _SpEnv()


@contextlib.contextmanager
def scalar_prefetch_context(*scalar_prefetch):
    saved = _SP.scalar_prefetch
    _SP.scalar_prefetch = scalar_prefetch
    try:
        yield
    finally:
        _SP.scalar_prefetch = saved


def current_scalar_prefetch():
    return _SP.scalar_prefetch
