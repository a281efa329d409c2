"""Differential fuzz against jax (fuzz_harness.py): indexing with every index kind, `.at[]`
updates, take, sorting, searching and nonzero."""
import numpy as np
import pytest

from fuzz_harness import ALL, BOOL, REAL, Case, fuzz, indices as _indices, names, registry

CASES, case = registry()

MODES_GATHER = [None, "clip", "wrap", "fill", "promise_in_bounds", "drop"]


@case("numpy.take")
def _take(d):
    x = d.array("x")
    axis = d.axis("axis", x.ndim)
    side = x.size if axis is None else x.shape[axis] if -x.ndim <= axis < x.ndim else 1
    idx = _indices(d, "indices", side)
    mode = d.pick("mode", MODES_GATHER)
    fill = d.pick("fill_value", [None, 0, -1])
    return Case(lambda L, x, i: L.numpy.take(x, i, axis=axis, mode=mode, fill_value=fill),
                [x, idx])


@case("numpy.take_along_axis")
def _take_along_axis(d):
    x = d.array("x", min_ndim=1)
    axis = d.axis("axis", x.ndim)
    if axis is None:
        shape = (d.int("n", 0, 4),)
        side = x.size
    else:
        shape = list(x.shape)
        ax = axis % x.ndim if -x.ndim <= axis < x.ndim else 0
        shape[ax] = d.int("n", 0, 4)
        side = x.shape[ax]
    idx = _indices(d, "indices", side, shape=tuple(shape))
    mode = d.pick("mode", [None, "clip", "fill", "promise_in_bounds"])
    return Case(lambda L, x, i: L.numpy.take_along_axis(x, i, axis=axis, mode=mode),
                [x, idx])


@case("numpy.nonzero")
def _nonzero(d):
    x = d.array("x", ALL, kind=0)
    name = d.pick("function", ["nonzero", "argwhere", "flatnonzero", "where"])
    size = d.pick("size", [None, 0, 2, 5])
    fill = d.pick("fill_value", [None, -1])
    return Case(lambda L, x: getattr(L.numpy, name)(x, size=size, fill_value=fill), [x])


@case("numpy.sort")
def _sort(d):
    x = d.array("x")
    axis = d.axis("axis", x.ndim)
    name = d.pick("function", ["sort", "argsort"])
    stable, descending = d.flag("stable"), d.flag("descending")
    return Case(lambda L, x: getattr(L.numpy, name)(x, axis=axis, stable=stable,
                                                    descending=descending), [x])


@case("numpy.partition")
def _partition(d):
    x = d.array("x", REAL, min_ndim=1)
    axis = d.axis("axis", x.ndim, none=False)
    side = x.shape[axis] if -x.ndim <= axis < x.ndim else 1
    kth = d.int("kth", -side, max(side - 1, 0))
    name = d.pick("function", ["partition", "argpartition"])
    # Only the kth element of a partition is defined; the rest is in any order.
    return Case(lambda L, x: L.numpy.take(getattr(L.numpy, name)(x, kth, axis=axis),
                                          kth, axis=axis), [x])


@case("numpy.unique")
def _unique(d):
    x = d.array("x", REAL, kind=0)
    kw = {k: d.flag(k) for k in ("return_index", "return_inverse", "return_counts")}
    kw["size"] = d.pick("size", [None, 1, 4])
    kw["axis"] = d.axis("axis", x.ndim, oob=False)
    return Case(lambda L, x: L.numpy.unique(x, **kw), [x])


@case("numpy.searchsorted")
def _searchsorted(d):
    a = np.sort(d.array("a", REAL, shape=(d.int("a.size", 0, 6),)))
    v = d.operand("v", REAL)
    side = d.pick("side", ["left", "right"])
    method = d.pick("method", ["scan", "sort", "compare_all", "scan_unrolled"])
    return Case(lambda L, a, v: L.numpy.searchsorted(a, v, side=side, method=method),
                [a, v])


# ---- indexing and .at[] updates --------------------------------------------------------

INDEX_KINDS = ["int", "slice", "array", "none", "ellipsis", "bool", "list", "scalar_array",
               "bool_scalar"]


def _index(d, shape):
    """An index of an array of this shape, with every kind of component; returns the
    index (numpy arrays in it) and which components are arrays."""
    n = d.int("index.len", 0, len(shape) + 1)
    parts, dim = [], 0
    for k in range(n):
        kind = d.pick(f"index[{k}]", INDEX_KINDS)
        side = shape[dim] if dim < len(shape) else 1
        if kind == "int":
            parts.append(d.int(f"index[{k}].value", -side - 1, side))
            dim += 1
        elif kind == "slice":
            bounds = [None] + list(range(-side - 1, side + 2))
            parts.append(slice(d.pick(f"index[{k}].start", bounds),
                               d.pick(f"index[{k}].stop", bounds),
                               d.pick(f"index[{k}].step", [None, 1, 2, -1, -2, 3])))
            dim += 1
        elif kind in ("array", "list", "scalar_array"):
            shp = () if kind == "scalar_array" else None
            value = _indices(d, f"index[{k}]", side, shape=shp)
            parts.append(value.tolist() if kind == "list" else value)
            dim += 1
        elif kind == "bool":
            m = d.int(f"index[{k}].ndim", 1, max(1, min(2, len(shape) - dim)))
            mshape = shape[dim:dim + m] if dim + m <= len(shape) else (side,)
            parts.append(d.array(f"index[{k}].mask", BOOL, shape=mshape))
            dim += len(mshape)
        elif kind == "bool_scalar":
            parts.append(d.flag(f"index[{k}].value"))
        elif kind == "none":
            parts.append(None)
        else:
            parts.append(Ellipsis)
            dim = max(dim, len(shape) - (n - k - 1))
    if len(parts) == 1 and d.flag("index.bare"):
        return parts[0]
    return tuple(parts)


def _traced_index(d, index):
    """Splits the index into a rebuild function and the arrays passed as (traced)
    arguments; the others stay concrete constants, as a user's numpy indices are."""
    parts = index if isinstance(index, tuple) else (index,)
    traced = [k for k, p in enumerate(parts)
              if isinstance(p, np.ndarray) and d.flag(f"index[{k}].traced")]

    def rebuild(L, arrays):
        out = list(parts)
        for k, a in zip(traced, arrays):
            out[k] = a
        return tuple(out) if isinstance(index, tuple) else out[0]
    return rebuild, [parts[k] for k in traced]


def _index_shape(shape, index):
    try:
        return np.empty(shape)[index].shape
    except (IndexError, ValueError, TypeError):
        return None


@case("index.getitem")
def _getitem(d):
    x = d.array("x", max_ndim=4)
    index = _index(d, x.shape)
    rebuild, arrays = _traced_index(d, index)
    return Case(lambda L, x, *a: L.numpy.asarray(x)[rebuild(L, a)], [x] + arrays)


@case("index.at")
def _at(d):
    x = d.array("x", max_ndim=3)
    index = _index(d, x.shape)
    rebuild, arrays = _traced_index(d, index)
    method = d.pick("method", ["set", "add", "multiply", "divide", "power", "min", "max",
                               "get", "apply"])
    kw = {"mode": d.pick("mode", [None, "clip", "drop", "fill", "promise_in_bounds"])}
    if d.flag("with_flags"):
        kw["indices_are_sorted"] = d.flag("indices_are_sorted")
        kw["unique_indices"] = d.flag("unique_indices")
    if method == "get":
        kw["fill_value"] = d.pick("fill_value", [None, 0, -1])
        return Case(lambda L, x, *a: L.numpy.asarray(x).at[rebuild(L, a)].get(**kw), [x] + arrays)
    if method == "apply":
        return Case(lambda L, x, *a: L.numpy.asarray(x).at[rebuild(L, a)].apply(
            lambda v: v * 2, **kw), [x] + arrays)
    shape = _index_shape(x.shape, index)
    kind = d.pick("update.kind", ["array", "scalar", "broadcast"])
    if kind == "scalar" or shape is None:
        u = d.operand("update", shape=(), scalar_odds=2)
    else:
        if kind == "broadcast":
            shape = d.broadcast_shape("update.shape", shape)
        u = d.array("update", [x.dtype.type] * 3 + ALL, shape=shape)
    def update(L, x, u, a):
        return getattr(L.numpy.asarray(x).at[rebuild(L, a)], method)(u, **kw)
    if isinstance(u, np.ndarray):
        return Case(lambda L, x, u, *a: update(L, x, u, a), [x, u] + arrays)
    return Case(lambda L, x, *a: update(L, x, u, a), [x] + arrays)


@pytest.mark.parametrize("name", names(CASES))
def test_matches_jax(name):
    fuzz(CASES, name)
