"""JAX-private: jax._src.util, the list helpers that JAX's "Writing custom interpreters"
notebook and libraries' jaxpr interpreters import (safe_map, safe_zip, unzip2,
split_list, ...). Each behaves as JAX's: the `safe_` ones check that their arguments
have equal lengths, and all return lists."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence


def safe_zip(*args: Iterable) -> list[tuple]:
    """zip that raises a ValueError when the arguments' lengths differ."""
    return list(zip(*args, strict=True))


def safe_map(f: Callable, *args: Iterable) -> list:
    """map that raises a ValueError when the arguments' lengths differ."""
    lists = [list(a) for a in args]
    n = len(lists[0]) if lists else 0
    for i, a in enumerate(lists[1:], 1):
        if len(a) != n:
            raise ValueError(f"safe_map() argument {i + 1} has length {len(a)} but "
                             f"argument 1 has length {n}")
    return list(map(f, *lists))


def unzip2(pairs: Iterable[tuple[Any, Any]]) -> tuple[tuple, tuple]:
    """Two tuples from an iterable of pairs."""
    xs, ys = [], []
    for x, y in pairs:
        xs.append(x)
        ys.append(y)
    return tuple(xs), tuple(ys)


def unzip3(triples: Iterable[tuple[Any, Any, Any]]) -> tuple[tuple, tuple, tuple]:
    """Three tuples from an iterable of triples."""
    xs, ys, zs = [], [], []
    for x, y, z in triples:
        xs.append(x)
        ys.append(y)
        zs.append(z)
    return tuple(xs), tuple(ys), tuple(zs)


def split_list(args: Sequence, ns: Sequence[int]) -> list[list]:
    """`args` cut into pieces of the lengths `ns`, and the rest as the last piece."""
    args, pieces = list(args), []
    for n in ns:
        pieces.append(args[:n])
        args = args[n:]
    return pieces + [args]


def partition_list(bs: Sequence[bool], xs: Sequence) -> tuple[list, list]:
    """(the xs whose flag is False, the xs whose flag is True)."""
    if len(bs) != len(xs):
        raise ValueError(f"partition_list: {len(bs)} flags for {len(xs)} elements")
    falses, trues = [], []
    for b, x in zip(bs, xs):
        (trues if b else falses).append(x)
    return falses, trues


def merge_lists(bs: Sequence[bool], falses: Sequence, trues: Sequence) -> list:
    """The inverse of partition_list."""
    falses, trues = iter(falses), iter(trues)
    out = [next(trues) if b else next(falses) for b in bs]
    for rest in (falses, trues):
        if next(rest, StopIteration) is not StopIteration:
            raise ValueError("merge_lists: more elements than flags")
    return out


def subvals(xs: Sequence, replace: Iterable[tuple[int, Any]]) -> tuple:
    """`xs` as a tuple with the (index, value) pairs of `replace` substituted."""
    out = list(xs)
    for i, v in replace:
        out[i] = v
    return tuple(out)


def concatenate(lists: Iterable[Iterable]) -> list:
    """The lists joined into one."""
    return [x for xs in lists for x in xs]


__all__ = ["safe_zip", "safe_map", "unzip2", "unzip3", "split_list", "partition_list",
           "merge_lists", "subvals", "concatenate"]
