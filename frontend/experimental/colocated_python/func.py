"""Colocated Python functions: a callable with an optional specialization (input specs,
an output-spec function, devices). JAX: jax.experimental.colocated_python.func.

In one process the colocated CPU devices are this process's, so a call runs the
function here on its arguments; what JAX checks before and after shipping the call to
the colocated runtime is checked the same way."""
from __future__ import annotations

import dataclasses
import functools

from mjax.base import tree_util
from mjax.arrays.array import Array
from mjax.arrays.placement import process_index
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct


@dataclasses.dataclass(frozen=True)
class Specialization:
    """What a colocated callable was specialized with (None: not given)."""
    in_specs_treedef: object = None
    in_specs_leaves: tuple | None = None
    out_specs_fn: object = None
    devices: tuple | None = None

    def update(self, *, in_specs_treedef=None, in_specs_leaves=None, out_specs_fn=None,
               devices=None) -> "Specialization":
        for name, new, old in (("in_specs", in_specs_treedef, self.in_specs_treedef),
                               ("out_specs_fn", out_specs_fn, self.out_specs_fn),
                               ("devices", devices, self.devices)):
            if new is not None and old is not None:
                raise ValueError(f"{name} already specified")
        return Specialization(
            self.in_specs_treedef if in_specs_treedef is None else in_specs_treedef,
            self.in_specs_leaves if in_specs_leaves is None else in_specs_leaves,
            self.out_specs_fn if out_specs_fn is None else out_specs_fn,
            self.devices if devices is None else tuple(devices))


def _get_spec(x) -> ShapeDtypeStruct:
    if not isinstance(x, Array):
        raise ValueError("colocated_python only supports jax.Array as input and output, "
                         f"but got {type(x)}.")
    return ShapeDtypeStruct(x.shape, x.dtype, sharding=x.sharding)


def _device_list(x) -> tuple:
    return tuple(x.sharding._device_list())


def _infer_devices(leaves) -> tuple | None:
    lists = {_device_list(x) for x in leaves}
    if not lists:
        return None
    if len(lists) != 1:
        raise ValueError("All arguments must use the same device list, but got multiple "
                         f"device lists: {sorted(lists, key=str)}.")
    return lists.pop()


def _same_spec(a, b) -> bool:
    return tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype


def _check_specs(what: str, treedef, leaves, want_treedef, want_leaves) -> None:
    if treedef != want_treedef:
        raise ValueError(f"colocated_python: {what} structure {treedef} does not match the "
                         f"specialized {what} specs {want_treedef}")
    for i, (g, w) in enumerate(zip(leaves, want_leaves)):
        if not _same_spec(g, w):
            raise ValueError(f"colocated_python: {what} {i} is {g.dtype}{list(g.shape)}, "
                             f"but its spec is {w.dtype}{list(w.shape)}")


def _check_local(devices) -> None:
    me = process_index()
    remote = sorted({d.process_index for d in devices} - {me})
    if remote:
        raise NotImplementedError(
            f"colocated_python: the arrays live on devices of process(es) {remote}, and "
            f"mjax runs the function only in its own process ({me}): mjax has no "
            f"colocated Python runtime to ship the function to another host")


class ColocatedFunction:
    """A colocated Python callable (what `colocated_python(fun)` returns)."""

    def __init__(self, fun, specialization: Specialization):
        self._fun = fun
        self._specialization = specialization
        functools.update_wrapper(self, fun)

    def specialize(self, in_specs=None, out_specs_fn=None, devices=None):
        """A callable with extra specialization: `in_specs`, the specs of `(args,
        kwargs)` (a pytree of ShapeDtypeStruct); `out_specs_fn`, a function from the
        input specs to the output specs; `devices`, where to run (needed when the
        function takes no arrays)."""
        if in_specs is None:
            leaves, treedef = None, None
        else:
            leaves, treedef = tree_util.tree_flatten(in_specs)
            leaves = tuple(leaves)
        return ColocatedFunction(self._fun, self._specialization.update(
            in_specs_treedef=treedef, in_specs_leaves=leaves, out_specs_fn=out_specs_fn,
            devices=devices))

    def __call__(self, *args, **kwargs):
        spec = self._specialization
        leaves, treedef = tree_util.tree_flatten((args, kwargs))
        in_specs = [_get_spec(x) for x in leaves]
        if not leaves and spec.devices is None:
            raise ValueError("No devices found. colocated_python function without input "
                             "arguments must be first specialized with devices.")
        if spec.in_specs_treedef is not None:
            _check_specs("input", treedef, in_specs, spec.in_specs_treedef,
                         spec.in_specs_leaves)
        devices = spec.devices if spec.devices is not None else _infer_devices(leaves)
        _check_local(devices)
        result = self._fun(*args, **kwargs)
        out_leaves, out_treedef = tree_util.tree_flatten(result)
        out_specs = [_get_spec(x) for x in out_leaves]
        if spec.out_specs_fn is not None:
            a_specs, kw_specs = tree_util.tree_unflatten(treedef, in_specs)
            want = spec.out_specs_fn(*a_specs, **kw_specs)
            want_leaves, want_treedef = tree_util.tree_flatten(want)
            _check_specs("output", out_treedef, out_specs, want_treedef,
                         want_leaves)
        return result


def make_callable(fun, fun_sourceinfo, fun_signature) -> ColocatedFunction:
    """A colocated callable of `fun` (its source info and signature: JAX's for error
    messages, unused here), with no specialization."""
    return ColocatedFunction(fun, Specialization())
