"""JAX: jax.extend.source_info_util: where traced operations come from (user frames,
name stacks). mjax records source locations as MLIR locations of its ops and names
through mjax.named_scope; this module keeps JAX's names for libraries that register
their own files as not-user code (flax) or read the current name stack."""
from __future__ import annotations

import contextlib
import dataclasses

from mjax._src import traceback_util

__all__ = ["NameStack", "SourceInfo", "current", "current_name_stack", "new_name_stack",
           "extend_name_stack", "reset_name_stack", "set_name_stack",
           "transform_name_stack", "new_source_info", "register_exclusion", "summarize",
           "user_context"]


@dataclasses.dataclass(frozen=True)
class NameStack:
    """A stack of scope names (named_scope), printed joined by '/'."""
    stack: tuple[str, ...] = ()

    def extend(self, name) -> "NameStack":
        names = (name,) if isinstance(name, str) else tuple(name)
        return NameStack(self.stack + names)

    def __str__(self):
        return "/".join(self.stack)


@dataclasses.dataclass(frozen=True)
class SourceInfo:
    traceback: object | None
    name_stack: NameStack


def new_name_stack(name: str = "") -> NameStack:
    return NameStack((name,) if name else ())


def new_source_info() -> SourceInfo:
    return SourceInfo(None, NameStack())


def current() -> SourceInfo:
    return SourceInfo(None, current_name_stack())


def current_name_stack() -> NameStack:
    return NameStack()


@contextlib.contextmanager
def extend_name_stack(name: str):
    yield current_name_stack().extend(name)


@contextlib.contextmanager
def set_name_stack(name_stack: NameStack):
    yield


@contextlib.contextmanager
def reset_name_stack():
    yield


@contextlib.contextmanager
def transform_name_stack(name: str):
    yield current_name_stack()


@contextlib.contextmanager
def user_context(c, *, name_stack=None):
    yield


def register_exclusion(path: str) -> None:
    """Frames from files under `path` are not user frames (mjax: recorded only)."""
    traceback_util.register_exclusion(path)


def summarize(source_info: SourceInfo, num_frames=1) -> str:
    return "unknown"
