"""Array layouts, as JAX 0.10 has them (the public module is
`mjax.experimental.layout`): how an array's elements are ordered in device memory.

    col = Format(Layout(major_to_minor=(1, 0)), SingleDeviceSharding(dev))
    y = mjax.device_put(np.ones((4, 8)), col)        # a column-major buffer
    y.format.layout.major_to_minor                     # (1, 0)
    f = mjax.jit(g, in_shardings=col, out_shardings=Format(Layout.AUTO))
    f.lower(x).compile().input_formats                 # what XLA compiled for

A layout reaches XLA as StableHLO's `mhlo.layout_mode` on @main's arguments and results
("default", "auto" or a minor-to-major list such as "{0,1}", written by the pass
--stablehlo-layout-modes: `layout_modes_pass`); XLA compiles the program
for it and reports the layouts it chose (`get_parameter_layouts`). XLA CPU honours any
dimension order, and resolves `Layout.AUTO` to its default row-major layout; it has no
tiled layouts (a TPU's are tiled: `layout_text` writes the tiles). The runtime copies an argument whose layout is not its parameter's
(runtime/xla.py: PJRT CPU would read it in the wrong order)."""
from __future__ import annotations

import inspect

import numpy as np

from mjax.base import trace_trees, tree_util
from mjax.specs.dtypes import issubdtype, itemsize_bits
from mjax.passes.analyses import recorded_op_names
from mjax.passes.stablehlo_layout_modes import StablehloLayoutModesPass
from mjax.runtime import get_backend
from mjax.runtime.xla import layout_mode_text
from mjax.specs.sharding_impls import Sharding, SingleDeviceSharding

__all__ = ["AutoLayout", "Format", "Layout"]


class AutoLayoutSingleton:
    """`Layout.AUTO`: the compiler chooses the layout."""

    def __repr__(self):
        return "AUTO"


AutoLayout = AutoLayoutSingleton()


class Layout:
    """A device layout: the order of dimensions from the slowest-varying (major) to the
    fastest-varying (minor), plus the tiling (TPU/GPU). JAX: jax.experimental.layout.Layout."""

    AUTO = AutoLayout

    def __init__(self, major_to_minor: tuple[int, ...],
                 tiling: tuple[tuple[int, ...], ...] | None = None,
                 sub_byte_element_size_in_bits: int = 0):
        self.major_to_minor = tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(tuple(t) for t in tiling)
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    @staticmethod
    def from_pjrt_layout(pjrt_layout) -> "Layout":
        """The layout jaxlib reports for a buffer or an executable's parameter."""
        xla = pjrt_layout._xla_layout()
        return Layout(tuple(xla.minor_to_major())[::-1], tuple(xla.tiling()),
                      xla.element_size_in_bits())

    def __repr__(self):
        return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
                f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")

    def _key(self):
        return self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return isinstance(other, Layout) and self._key() == other._key()

    def update(self, **kwargs) -> "Layout":
        """A copy with the given fields replaced."""
        fields = dict(zip(("major_to_minor", "tiling", "sub_byte_element_size_in_bits"),
                          self._key()))
        fields.update(kwargs)
        return Layout(**fields)

    def check_compatible_aval(self, aval_shape) -> None:
        if len(self.major_to_minor) != len(aval_shape):
            raise ValueError(f"Length of major_to_minor and the rank of the value should "
                             f"match. Got major_to_minor={self.major_to_minor} and "
                             f"shape={tuple(aval_shape)}")


class Format:
    """A layout (a `Layout`, `Layout.AUTO` or None: the default) with a sharding (None:
    unspecified). JAX: jax.experimental.layout.Format."""

    __slots__ = ("layout", "sharding")

    def __init__(self, layout=None, sharding=None):
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError(
                f"Sharding has to be concrete when layout is of type {type(layout)}. "
                f"Please pass a `jax.sharding.NamedSharding` or "
                f"`jax.sharding.SingleDeviceSharding` to the sharding argument. Got "
                f"sharding {sharding}")
        if not isinstance(layout, (Layout, AutoLayoutSingleton, type(None))):
            raise TypeError(f"Invalid value received for the layout argument. Expected "
                            f"values are `None`, `Layout.AUTO` or an instance of `Layout`. "
                            f"Got {layout} of type {type(layout)}")
        if not isinstance(sharding, (Sharding, type(None))):
            raise TypeError(f"Invalid value received for the sharding argument. Expected "
                            f"values are `None` or an instance of `jax.Sharding`. Got "
                            f"{sharding} of type {type(sharding)}")
        self.layout = layout
        self.sharding = sharding

    def __repr__(self):
        return f"Format(layout={self.layout}, sharding={self.sharding})"

    def __hash__(self):
        return hash((self.layout, self.sharding))

    def __eq__(self, other):
        return isinstance(other, Format) and (self.layout, self.sharding) == (
            other.layout, other.sharding)


# ---- layouts of buffers ----------------------------------------------------------------
def buffer_layout(buf) -> Layout | None:
    """The layout of a device buffer (None where its backend reports none, or it is
    deleted: reading a deleted buffer's layout crashes the process)."""
    try:
        if buf.is_deleted():
            return None
        return Layout.from_pjrt_layout(buf._pjrt_layout)
    except Exception:  # noqa: BLE001 - IREE buffers, deleted buffers
        return None


def same_layout(user, actual) -> bool:
    """Whether a layout the user wrote is `actual` (the tiling only when the user gave
    one, as JAX compares them)."""
    if isinstance(user, Layout) and not user.tiling and isinstance(actual, Layout):
        return user.major_to_minor == actual.major_to_minor
    return user == actual


def relayout(buf, layout: Layout):
    """`buf` copied into `layout` (the same buffer when it has it)."""
    text = layout_text(layout, buf.aval.dtype) if layout.tiling else None
    return get_backend().relayout(buf, layout.major_to_minor[::-1], text)


# ---- jit(in_shardings=Format(...), out_shardings=Format(...)) -----------------------------
def _is_format_leaf(x) -> bool:
    return x is None or isinstance(x, (Format, Sharding, Layout, AutoLayoutSingleton))


def split_formats(tree):
    """(shardings, layouts) of an in_shardings/out_shardings pytree whose leaves may be
    Formats; layouts is None when it has none, shardings None when only Formats without
    shardings were given."""
    leaves = trace_trees.tree_leaves(tree, is_leaf=_is_format_leaf)
    if not any(isinstance(x, Format) for x in leaves):
        return tree, None
    shardings = trace_trees.tree_map(
        lambda x: x.sharding if isinstance(x, Format) else x, tree, is_leaf=_is_format_leaf)
    layouts = trace_trees.tree_map(
        lambda x: x.layout if isinstance(x, Format) else None, tree,
        is_leaf=_is_format_leaf)
    if all(x is None for x in trace_trees.tree_leaves(shardings, is_leaf=_is_format_leaf)):
        shardings = None
    return shardings, layouts


def split_jit_formats(in_shardings, out_shardings):
    """(in_shardings, out_shardings, layouts, device) of a jit given Formats: the
    shardings without them; `layouts` (the in and out layout prefixes) None without
    Formats; `device` the one device of Formats whose shardings are all one
    SingleDeviceSharding (jit then runs there, as with jit(device=...)), else None."""
    in_shardings, in_layouts = split_formats(in_shardings)
    out_shardings, out_layouts = split_formats(out_shardings)
    if in_layouts is None and out_layouts is None:
        return in_shardings, out_shardings, None, None
    given = [s for tree in (in_shardings, out_shardings) if tree is not None
             for s in trace_trees.tree_leaves(tree, is_leaf=_is_format_leaf)
             if s is not None]
    devices = {s._device for s in given if isinstance(s, SingleDeviceSharding)}
    device = None
    if given and len(devices) == 1 and all(isinstance(s, SingleDeviceSharding)
                                           for s in given):
        device, in_shardings, out_shardings = devices.pop(), None, None
    return in_shardings, out_shardings, (in_layouts, out_layouts), device


def _is_layout_leaf(x) -> bool:
    return x is None or isinstance(x, (Layout, AutoLayoutSingleton))


def flat_layouts(prefix, tree, what: str) -> list:
    """One layout (or None) per leaf of `tree` from a pytree prefix of layouts."""
    if prefix is None:
        return [None] * len(trace_trees.tree_leaves(tree))
    if _is_layout_leaf(prefix):
        return [prefix] * len(trace_trees.tree_leaves(tree))
    return tree_util.prefix_entries(f"jit {what}", prefix, tree, _is_layout_leaf)


def modes(layouts, avals) -> list[str]:
    """`mhlo.layout_mode` of each value: "default", "auto" or a minor-to-major order."""
    out = []
    for layout, aval in zip(layouts, avals):
        if layout is None:
            out.append("default")
        elif isinstance(layout, AutoLayoutSingleton):
            out.append("auto")
        else:
            layout.check_compatible_aval(aval.shape)
            out.append(layout_text(layout, aval.dtype))
    return out


def layout_text(layout: Layout, dtype) -> str:
    """`layout` as XLA spells it for `mhlo.layout_mode`: "{0,1}", or with its tiles and
    element size "{0,1:T(8,128)(2,1)E(4)}" (TPU layouts; XLA CPU refuses tiles). As in
    JAX, sub-byte integers given tiles take their bit width as the element size."""
    text = layout_mode_text(layout.major_to_minor[::-1])
    if layout.tiling is None:
        return text
    bits = layout.sub_byte_element_size_in_bits
    if not bits and issubdtype(dtype, np.integer) and itemsize_bits(dtype) < 8:
        bits = itemsize_bits(dtype)
    tiles = "".join("(" + ",".join(str(int(d)) for d in tile) + ")" for tile in layout.tiling)
    parts = ("T" + tiles if tiles else "") + (f"E({bits})" if bits else "")
    return text[:-1] + ":" + parts + "}" if parts else text


def jit_modes(layouts, traced) -> tuple[list[str], list[str]]:
    """(`mhlo.layout_mode` of each argument leaf, of each result) of a traced function
    whose jit was given Formats (`layouts`: the in and out layout prefixes)."""
    in_layouts, out_layouts = layouts
    n_in = len(traced.in_avals)
    flat_in = [None] * n_in
    if in_layouts is not None:
        args, _ = tree_util.tree_unflatten(traced.in_tree, list(traced.in_avals))
        flat_in = flat_layouts(in_layouts, args, "in_shardings")
        flat_in += [None] * (n_in - len(flat_in))   # (keyword arguments: unconstrained)
    outs = tree_util.tree_unflatten(traced.out_tree, list(traced.out_avals))
    flat_out = flat_layouts(out_layouts, outs, "out_shardings")
    return modes(flat_in, traced.in_avals), modes(flat_out, traced.out_avals)


def layout_modes_pass(layouts, traced) -> StablehloLayoutModesPass | None:
    """--stablehlo-layout-modes for a jit's lowered program: the layouts of the Formats
    it was given (`layouts`, or None); without them it still makes the results that are
    a `with_layout_constraint` "auto", so XLA gives them the constraint's layout (as JAX
    does); None where the tracer knows there is none."""
    if layouts is None:
        names = recorded_op_names(traced.module)     # (the tracer's: none is a walk)
        return None if names is not None and "jaxpr.layout_constraint" not in names \
            else _NO_LAYOUTS
    in_modes, out_modes = jit_modes(layouts, traced)
    return StablehloLayoutModesPass(in_modes=tuple(in_modes), out_modes=tuple(out_modes))


_NO_LAYOUTS = StablehloLayoutModesPass()


def executable_formats(exe, shardings, n, outputs: bool) -> list:
    """The Format of each of the first `n` parameters (or results) of a compiled program:
    XLA's layout with the given shardings."""
    read = getattr(exe, "output_layouts" if outputs else "parameter_layouts", None)
    layouts = read() if read is not None else None     # (IREE: no layouts)
    layouts = [None] * n if layouts is None else [Layout.from_pjrt_layout(x)
                                                  for x in layouts[:n]]
    return [Format(layout, s) for layout, s in zip(layouts, shardings)]


def arg_names(fun, in_tree, static: bool) -> list[str]:
    """JAX's names of the argument leaves of a call of `fun` (x, x['w'], kw), as its
    errors name them; `args[0]`-style paths where the signature cannot tell (static
    arguments shift the positions)."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [q.name for q in params if q.kind in (q.POSITIONAL_ONLY,
                                                        q.POSITIONAL_OR_KEYWORD)]
    names = []
    for path, _ in trace_trees.tree_flatten_with_path(tree_util.tree_unflatten(
            in_tree, list(range(in_tree.num_leaves))))[0]:
        rest = tree_util.keystr(tuple(path[2:]))
        if path[0].idx == 1:                       # a keyword argument
            names.append(str(path[1].key) + rest)
        elif not static and path[1].idx < len(positional):
            names.append(positional[path[1].idx] + rest)
        else:
            names.append(f"args[{path[1].idx}]" + rest)
    return names


def check_compiled_args(leaves, exe, avals, traced) -> None:
    """JAX's error for a committed array whose layout is not the one a compiled program
    takes (an uncommitted one is copied into it)."""
    wanted = exe.parameter_layouts()
    if not wanted:
        return
    bad = []
    paths = getattr(traced, "arg_names", None) or arg_names(None, traced.in_tree, True)
    for x, want, aval, path in zip(leaves, wanted, avals, paths):
        if not getattr(x, "_committed", False) or not hasattr(x, "_buf"):
            continue
        have = buffer_layout(x._buf)
        want = Layout.from_pjrt_layout(want)
        if have is not None and have != want:
            bad.append(f"Argument {path} with shape {aval}:\n"
                       f"  Passed layout: {have}\n  Required layout: {want}")
    if bad:
        raise ValueError(f"Computation was compiled for input layouts that disagree with "
                         f"the layouts of arguments passed to it. Here are the {len(bad)} "
                         f"mismatches:\n" + "\n".join(bad))


def check_jit_args(layouts, dyn_args, leaves) -> None:
    """JAX's error for a committed array passed to a jit whose in_shardings give it
    another layout."""
    for layout, x in zip(flat_layouts(layouts[0], dyn_args, "in_shardings"), leaves):
        if layout is None or not getattr(x, "_committed", False) or \
                not hasattr(x, "_buf"):
            continue
        have = buffer_layout(x._buf)
        if have is not None and not same_layout(layout, have):
            auto = (" The layout given to `jax.jit` is `Layout.AUTO` but the corresponding "
                    "argument passed is a `jax.Array` with a concrete layout. Consider "
                    "passing a `jax.ShapeDtypeStruct` instead of `jax.Array` as an argument "
                    "to the jitted function  when using `Layout.AUTO`."
                    if isinstance(layout, AutoLayoutSingleton) else "")
            raise ValueError(f"Layout passed to jit does not match the layout on the "
                             f"respective arg. Got jit layout: {layout},\narg layout: "
                             f"{have} for arg type: {x.aval}.{auto}")


def mark_laid_out(arrays) -> None:
    """Gives each array (mjax.Array) whose buffer is not in the default layout its
    sharding object and commits it: the fast paths of eager ops and jit, which hand
    buffers straight to XLA, only take arrays without one, so a buffer in another layout
    always reaches runtime/xla.py's layout check."""
    for x in arrays:
        buf = getattr(x, "_buf", None)
        have = buffer_layout(buf) if buf is not None else None
        if have is None or x._sharding is not None:
            continue
        if have.major_to_minor != tuple(range(len(have.major_to_minor))):
            devices = get_backend().buffer_devices(buf)
            x._sharding = SingleDeviceSharding(devices[0])
            x._committed = True
