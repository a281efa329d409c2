"""`Fusion`: a function standing for the ops fused into a fusible's input or output.

JAX: jax.experimental.pallas.fuser.Fusion. An input fusion takes no arguments and
returns the fusible's input; an output fusion takes the fusible's result(s) and returns
what the surrounding program computes from them. `in_type` is `(args, kwargs)` of avals,
`out_type` a pytree of avals.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from mjax.base import tree_util


@dataclasses.dataclass
class Fusion:
    func: Callable[..., Any]
    in_type: tuple[tuple[Any, ...], dict[str, Any]]
    out_type: Any
    strict_mode: bool = True

    def __class_getitem__(cls, item):     # (JAX's Fusion is Generic: Fusion[[], Array])
        return cls

    def __call__(self, *args, **kwargs):
        return self.func(*args, **kwargs)

    @property
    def shape(self):
        return tree_util.tree_map(lambda a: a.shape, self.out_type)

    @property
    def dtype(self):
        return tree_util.tree_map(lambda a: a.dtype, self.out_type)

    @property
    def type(self):
        return self.out_type

    @property
    def in_shape(self):
        return tree_util.tree_map(lambda a: a.shape, self.in_type)

    @property
    def in_dtype(self):
        return tree_util.tree_map(lambda a: a.dtype, self.in_type)
