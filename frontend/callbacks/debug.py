"""`mjax.debug`: print, call back and look at values inside staged code.

    @mjax.jit
    def f(x):
        mjax.debug.print("x = {x}", x=x)        # prints when the program runs
        return x * 2

Each call stages one `jaxpr.callback` with a debug effect (never removed; ordered ones
keep program order); under vmap it runs once per batch element, under grad it sees the
primal values. JAX: jax/_src/debugging.py.
"""
from __future__ import annotations

import cmd
import copy
import logging
import string
import sys
from typing import Any, Callable

import numpy as np

from mjax.base import trace_trees, tree_util
from mjax.arrays.host_callbacks import register
from mjax.callbacks import call
from mjax.dialect.ops.pallas_tpu import DebugPrintOp
from mjax.tracing.core import aval_of_value, bind, current_trace, user_frame
from mjax.arrays.placement import devices
from mjax.specs.sharding_impls import SingleDeviceSharding


# ---- arguments: arrays are staged, everything else is passed through -----------------------
def _is_array_leaf(x) -> bool:
    try:
        aval_of_value(x)
        return True
    except (TypeError, OverflowError):
        return False


def _split(args, kwargs):
    """(tree, array leaves, {position: other leaf}). JAX: debugging._split_callback_args."""
    leaves, tree = trace_trees.tree_flatten((args, kwargs))
    dyn, static = [], {}
    for i, leaf in enumerate(leaves):
        if _is_array_leaf(leaf):
            dyn.append(leaf)
        else:
            static[i] = leaf
    return tree, dyn, static


def _merge(tree, dyn, static):
    it = iter(dyn)
    leaves = [static[i] if i in static else next(it) for i in range(len(dyn) + len(static))]
    return tree_util.tree_unflatten(tree, leaves)


# Whether a Pallas kernel is being traced: filled by mjax.experimental.pallas (a higher
# floor) at import. There a print is one `jaxpr.debug_print` (Mosaic's tpu.log when
# compiled), which keeps the host callback interpret mode runs.
IN_KERNEL: list[Callable[[], bool]] = []


def _in_kernel() -> bool:
    return current_trace() is not None and any(f() for f in IN_KERNEL)


def _stage_kernel_print(show: Callable, args, kwargs, fmt: str, ordered: bool,
                        has_placeholders: bool, key) -> None:
    tree, dyn, static = _split(args, kwargs)

    def flat(*arrays):
        a, k = _merge(tree, arrays, static)
        show(*a, **k)
        return ()
    shared = None if key is None else (key, tree, _freeze(static), ordered)
    if static:
        raise NotImplementedError(
            f"a print inside a Pallas kernel takes arrays and numbers only, got "
            f"{', '.join(type(v).__name__ for v in static.values())}")
    bind(DebugPrintOp, *dyn, fmt=fmt, callback_id=register(flat, "debug.print", shared),
         ordered=ordered, has_placeholders=has_placeholders, keywords=bool(kwargs))


def _freeze(static: dict):
    return tuple(sorted(static.items(), key=lambda kv: kv[0]))


def _stage(name: str, fn: Callable, args, kwargs, ordered: bool, key) -> None:
    tree, dyn, static = _split(args, kwargs)

    def flat(*arrays):
        a, k = _merge(tree, arrays, static)
        fn(*a, **k)
        return ()
    # (key None: a callable of its own, e.g. a breakpoint's or a log's, which close over
    # a frame or a record; shared, a later one with the same arguments would run it)
    shared = None if key is None else (key, tree, _freeze(static), ordered)
    try:
        call(name, "debug_ordered" if ordered else "debug", flat, shared, dyn, [])
    except RuntimeError as e:
        if current_trace() is not None or e.__cause__ is None:
            raise
        # Called eagerly, JAX runs a debug callback in Python: its own exception (already
        # logged) reaches the caller, not the runtime's wrapper.
        raise e.__cause__ from None


# ---- callback ---------------------------------------------------------------------------
def callback(callback: Callable[..., None] | None = None, *args: Any, ordered: bool = False,
             partitioned: bool = False, **kwargs: Any):
    """Calls `callback(*args, **kwargs)` with the runtime values of array arguments when
    the program runs (other arguments pass through unchanged). The two-call form
    `callback(ordered=True)(f, *args)` is accepted too. JAX: jax.debug.callback."""
    def staged(cb, *c_args, **c_kwargs):
        if not callable(cb):
            raise TypeError(f"first argument to jax.debug.callback must be callable, but "
                            f"got an object of type {type(cb)}")
        _stage("debug.callback", cb, c_args, c_kwargs, ordered, ("callback", cb))

    if callback is not None:
        staged(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug_callback received unexpected arguments in the two-call "
                        f"form: {args=} {kwargs=}")
    return staged


# ---- print ------------------------------------------------------------------------------
class _FormatChecker(string.Formatter):
    """Checks that every argument is used, without formatting. JAX: debugging's
    _DebugPrintFormatChecker, same messages."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused_args = [a for i, a in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: "
                             f"{unused_args}")
        if unused_kwargs:
            raise ValueError(f"Unused keyword arguments to `jax.debug.print`: "
                             f"{unused_kwargs}. You may be passing an f-string (i.e, "
                             f"`f\"{{x}}\"`) into `jax.debug.print` and instead should pass "
                             f"in a regular string.")


def _format_and_print(fmt: str, printoptions: tuple, has_placeholders: bool, record,
                      *args, **kwargs) -> None:
    if has_placeholders:
        with np.printoptions(**dict(printoptions)):
            msg = fmt.format(*args, **kwargs)
    else:
        msg = " ".join((fmt, *(str(a) for a in args)))
    if record is None:
        sys.stdout.write(msg + "\n")
    else:
        record = copy.copy(record)
        record.msg = msg
        _logger.handle(record)


_logger = logging.getLogger("mjax.debug")


def _log_record():
    """A logging record (INFO) naming the user's line, filled with the message later."""
    frame = user_frame()
    path, line, func = ((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
                        if frame is not None else ("(unknown)", 0, None))
    return _logger.makeRecord(_logger.name, logging.INFO, path, line, "", (), None, func)


def log(fmt: str | None = None, *args, ordered: bool = False, partitioned: bool = False,
        skip_format_check: bool = False, **kwargs):
    """`print`, but the message goes to the `mjax.debug` logger at INFO level (with the
    user's line). JAX: jax.debug.log."""
    return print(fmt, *args, ordered=ordered, partitioned=partitioned,
                 skip_format_check=skip_format_check, _use_logging=True, **kwargs)


def print(fmt: str | None = None, *args, ordered: bool = False,  # noqa: A001 - JAX's name
          partitioned: bool = False, skip_format_check: bool = False,
          _use_logging: bool = False, **kwargs):
    """Prints `fmt.format(*args, **kwargs)` with the runtime values (NumPy's print options
    in force at the call). The two-call form `print(ordered=True)(fmt, ...)` is accepted
    too. JAX: jax.debug.print."""
    def staged(fmt: str, *c_args, **c_kwargs):
        if not skip_format_check:
            _FormatChecker().format(fmt, *c_args, **c_kwargs)
        has_placeholders = False
        if fmt:
            _, field, *_ = next(iter(string.Formatter().parse(fmt)))
            has_placeholders = field is not None
        options = tuple(np.get_printoptions().items())

        record = _log_record() if _use_logging else None

        def show(*a, **k):
            _format_and_print(fmt, options, has_placeholders, record, *a, **k)
        key = ("print", fmt, has_placeholders, _hashable_options(options)) \
            if record is None else None
        if _in_kernel():
            _stage_kernel_print(show, c_args, c_kwargs, fmt, ordered, has_placeholders, key)
            return
        _stage("debug.print", show, c_args, c_kwargs, ordered, key)

    if fmt is not None:
        staged(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug_print received unexpected arguments in the two-call form: "
                        f"{args=} {kwargs=}")
    return staged


def _hashable_options(options):
    return tuple((k, v if not callable(v) and not isinstance(v, dict) else id(v))
                 for k, v in options)


# ---- breakpoint -------------------------------------------------------------------------
class _Frame:
    """One Python frame as the debugger shows it: file, line, source and variables (traced
    arrays among its locals are replaced by their runtime values)."""

    def __init__(self, frame, arrays: dict):
        import inspect
        self.filename = frame.f_code.co_filename
        self.lineno = frame.f_lineno
        self.globals: dict = {}       # (JAX's debugger sees the locals only)
        self.locals = dict(frame.f_locals)
        self.arrays = arrays          # local name -> traced (or concrete) array
        # The source of the frame's block (a function's, or the whole module), as JAX
        # shows it; line numbers count from 1, offsets from 0.
        try:
            _, start = inspect.getsourcelines(frame)
            self.source = inspect.getsource(frame).split("\n")
            self.offset = self.lineno - max(start, 1)
            if self.offset >= len(self.source):
                self.source, self.offset = [], None
        except (OSError, TypeError):
            self.source, self.offset = [], None


def _user_frames(start, filter_frames: bool, num_frames):
    """The frames from `start` outwards; with filter_frames, mjax's own are left out."""
    import os
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    frames = []
    f = start
    while f is not None:
        if not (filter_frames and os.path.abspath(f.f_code.co_filename).startswith(here)):
            arrays = {k: v for k, v in f.f_locals.items()
                      if _is_array_leaf(v) and not isinstance(v, (bool, int, float, complex))}
            frames.append(_Frame(f, arrays))
        f = f.f_back
    return frames[:num_frames] if num_frames is not None else frames


def breakpoint(*, backend=None, filter_frames: bool = True, num_frames=None,  # noqa: A001
               ordered: bool = False, token=None, **kwargs):
    """Stops the program where it runs and opens JAX's text debugger (`(jdb) ` prompt,
    commands read from stdin: p/pp <expr>, u(p), d(own), l(ist), w(here), c(ontinue),
    q(uit)) over the runtime values of the callers' variables. As JAX's, quitting or the
    end of stdin exits (SystemExit; under jit the call fails with it). JAX:
    jax.debug.breakpoint."""
    if token is not None:
        raise NotImplementedError("jax.debug.breakpoint(token=...) is not supported")
    if backend not in (None, "cli"):
        raise ValueError(f"Debugger backend {backend!r} is not available: mjax has the "
                         f"'cli' text debugger only")
    frames = _user_frames(sys._getframe(1), filter_frames, num_frames)
    slots = [(i, name) for i, fr in enumerate(frames) for name in fr.arrays]
    values = tuple(frames[i].arrays[name] for i, name in slots)

    def stop(*arrays):
        shown = [copy.copy(fr) for fr in frames]
        for fr in shown:
            fr.locals = dict(fr.locals)
        for (i, name), value in zip(slots, arrays):
            shown[i].locals[name] = value
        _Debugger(shown).run()
    _stage("debug.breakpoint", stop, values, {}, ordered, None)


class _Debugger(cmd.Cmd):
    """JAX's CLI debugger's commands and output over runtime values. JAX:
    jax/_src/debugger/cli_debugger.py."""

    prompt = "(jdb) "

    def __init__(self, frames: list):
        super().__init__()
        self.frames = frames
        self.frame_index = 0
        self.intro = "Entering jdb:"

    def evaluate(self, expr):
        frame = self.frames[self.frame_index]
        return eval(expr, {}, {**frame.globals, **frame.locals})  # noqa: S307 - user prompt

    def _error(self):
        import traceback
        self.stdout.write("*** " + traceback.format_exception_only(
            *sys.exc_info()[:2])[-1].strip() + "\n")

    def default(self, line):
        self.do_p(line)

    def do_p(self, arg):
        """p expression: print its value."""
        try:
            self.stdout.write(repr(self.evaluate(arg)) + "\n")
        except Exception:  # noqa: BLE001 - reported, the prompt goes on
            self._error()

    def do_pp(self, arg):
        """pp expression: pretty-print its value."""
        import pprint
        try:
            self.stdout.write(pprint.pformat(self.evaluate(arg)) + "\n")
        except Exception:  # noqa: BLE001 - reported, the prompt goes on
            self._error()

    def _context(self, num_lines=2):
        frame = self.frames[self.frame_index]
        lines = [f"> {frame.filename}({frame.lineno})"]
        if frame.offset is not None:
            for i, line in enumerate(frame.source):
                if frame.offset - 1 - num_lines <= i <= frame.offset + num_lines:
                    lines.append(("->  " if i == frame.offset else "    ") + line)
        self.stdout.write("\n".join(lines) + "\n")

    def do_up(self, arg):
        """u(p): one frame up."""
        if self.frame_index == len(self.frames) - 1:
            self.stdout.write("At topmost frame.\n")
        else:
            self.frame_index += 1
        self._context()

    def do_down(self, arg):
        """d(own): one frame down."""
        if self.frame_index == 0:
            self.stdout.write("At bottommost frame.\n")
        else:
            self.frame_index -= 1
        self._context()

    def do_list(self, arg):
        """l(ist): the source around the current line."""
        self._context(num_lines=5)

    def do_where(self, arg):
        """w(here): the stack, most recent frame last."""
        lines = ["Traceback:"]
        for frame in self.frames[::-1]:
            lines.append(f'  File "{frame.filename}", line {frame.lineno}')
            lines.append("    " + (frame.source[frame.offset].strip()
                                   if frame.offset is not None else "<no source>"))
        self.stdout.write("\n".join(lines) + "\n")

    def do_continue(self, arg):
        """c(ont(inue)): resume the program."""
        return True

    def do_quit(self, arg):
        """q(uit), exit, end of input: exit the program, as JAX's debugger does."""
        sys.exit(0)

    do_u, do_d, do_l, do_w, do_bt = do_up, do_down, do_list, do_where, do_where
    do_c = do_cont = do_continue
    do_q = do_exit = do_EOF = do_quit

    def run(self):
        while True:
            try:
                self.cmdloop()
                return
            except KeyboardInterrupt:
                sys.stdout.write("--KeyboardInterrupt--\n")


# ---- sharding ---------------------------------------------------------------------------
def inspect_array_sharding(value, *, callback: Callable):
    """Calls `callback(sharding)` with the sharding of each array in `value`. JAX:
    jax.debug.inspect_array_sharding."""
    def inspect(x):
        sharding = getattr(x, "sharding", None)
        if sharding is None:
            sharding = SingleDeviceSharding(devices()[0])
        callback(sharding)
    trace_trees.tree_map(inspect, value)


def visualize_array_sharding(arr, *, use_color: bool = True, scale: float = 1.0,
                             min_width: int = 9, max_width: int = 80, color_map=None):
    """Prints how `arr` is laid out over devices as a text table (one block per device
    holding a distinct piece). JAX: jax.debug.visualize_array_sharding."""
    shape = getattr(arr, "shape", np.shape(arr))
    if len(shape) > 2:
        raise ValueError(f"Number of dimensions of `arr` must be <= 2 for visualization, "
                         f"got {len(shape)}")

    def show(sharding):
        visualize_sharding(tuple(shape), sharding, use_color=use_color, scale=scale,
                           min_width=min_width, max_width=max_width, color_map=color_map)
    inspect_array_sharding(arr, callback=show)


def visualize_sharding(shape, sharding, *, use_color: bool = True, scale: float = 1.0,
                       min_width: int = 9, max_width: int = 80, color_map=None):
    """Prints the block layout of an array of `shape` under `sharding` as a text grid:
    one cell per distinct block, naming the devices holding it (replicas joined by
    commas), each cell sized by its block's share of the array. JAX:
    jax.debug.visualize_sharding, which draws a `rich` table; printed to anything but a
    color terminal that table is this box-drawn grid (mjax always draws it)."""
    if not 1 <= len(shape) <= 2:
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 "
                         "dimensions.")
    shape = tuple(shape)
    cells = _blocks(shape, sharding)
    nrows = max(r for r, _ in cells) + 1
    ncols = max(c for _, c in cells) + 1
    # JAX's sizing: a 10-line-high picture (times scale) of the array's aspect ratio,
    # characters 2.5 times as high as wide, every cell at least min_width wide.
    base_height = int(10 * scale)
    base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
    laid = {}
    for key, (label, height_frac, width_frac) in cells.items():
        width = min(max(int(width_frac * base_width * 2.5), min_width), max_width)
        height = 1 if height_frac is None else int(height_frac * base_height)
        left, extra = divmod(width - len(label) - 2, 2)
        top, extra_v = divmod(height - 2, 2)
        laid[key] = (label, max(top, 0), max(top + extra_v, 0), max(left, 0),
                     max(left + extra, 0))
    widths = [max(len(laid[r, c][0]) + laid[r, c][3] + laid[r, c][4] for r in range(nrows))
              for c in range(ncols)]
    widths = _fit(widths, max_width - ncols - 1)
    out = [_rule("┌", "┬", "┐", widths)]
    for r in range(nrows):
        blocks = [_cell_lines(*laid[r, c], widths[c]) for c in range(ncols)]
        for i in range(max(map(len, blocks))):
            out.append("│" + "│".join(b[i] if i < len(b) else " " * w
                                      for b, w in zip(blocks, widths)) + "│")
        if r + 1 < nrows:
            out.append(_rule("├", "┼", "┤", widths))
    out.append(_rule("└", "┴", "┘", widths))
    sys.stdout.write("\n".join(out) + "\n")


def _fit(widths: list[int], room: int) -> list[int]:
    """Column widths narrowed to `room` characters as rich narrows a table to its
    console: the widest columns give way first, each by a rounded share of the excess."""
    widths = list(widths)
    while sum(widths) > room:
        widest = max(widths)
        second = max((w for w in widths if w != widest), default=0)
        excess = sum(widths) - room
        can_give = min(excess, widest - second)
        givers = sum(w == widest for w in widths)
        left, share_of = excess, givers
        for i, w in enumerate(widths):
            if w == widest:
                cut = min(can_give, round(left / share_of))
                widths[i] -= cut
                left -= cut
                share_of -= 1
    return widths


def _cell_lines(label, top, bottom, left, right, width) -> list[str]:
    """A padded cell of a table column `width` wide, its label centered between the
    side paddings (as rich's Padding around a centered Align)."""
    inner = max(width - left - right, 1)
    texts = []
    for line in _wrap(label, inner):
        pad = inner - len(line)
        texts.append(" " * left + " " * (pad // 2) + line + " " * (pad - pad // 2) +
                     " " * right)
    return [" " * width] * top + texts + [" " * width] * bottom


def _wrap(label: str, width: int) -> list[str]:
    """`label` wrapped at spaces to `width`, a word too long for it cut with an ellipsis
    (as rich wraps a narrowed cell)."""
    lines: list[str] = []
    for word in label.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return [ln if len(ln) <= width else ln[:width - 1] + "…" for ln in lines]


def _rule(left, mid, right, widths) -> str:
    return left + mid.join("─" * w for w in widths) + right


def _blocks(shape, sharding) -> dict:
    """(block row, block column) -> (label, block height / rows or None for a vector,
    block width / columns) of each distinct block."""
    index_map = getattr(sharding, "devices_indices_map", None)
    if index_map is not None:
        mapping = index_map(shape)
    else:
        mapping = {d: tuple(slice(None) for _ in shape) for d in _devices_of(sharding)}
    owners: dict = {}
    extent: dict = {}
    platform = "CPU"
    for dev, index in mapping.items():
        platform = getattr(dev, "platform", "cpu").upper()
        index = tuple(slice(s, s + 1) if isinstance(s, int) else s for s in index)
        spans = [(s.start or 0, (size if s.stop is None else s.stop) - (s.start or 0))
                 for s, size in zip(index, shape)]
        key = tuple(start // length for start, length in spans)
        if len(shape) == 1:      # a vector's blocks lie side by side
            key = (0,) + key
            extent[key] = (None, spans[0][1] / shape[0])
        else:
            extent[key] = (spans[0][1] / shape[0], spans[1][1] / shape[1])
        owners.setdefault(key, []).append(getattr(dev, "id", 0))
    return {k: (f"{platform} {','.join(map(str, sorted(ids)))}",) + extent[k]
            for k, ids in owners.items()}


def _devices_of(sharding) -> list:
    for attr in ("_device_assignment", "device_set"):
        devs = getattr(sharding, attr, None)
        if devs:
            return sorted(devs, key=lambda d: getattr(d, "id", 0))
    dev = getattr(sharding, "_device", None)
    return [dev] if dev is not None else []


class DebugEffect:
    """The effect of debug callbacks (JAX: jax.debug.DebugEffect); in mjax IR it is the
    `effect = "debug"` attribute of jaxpr.callback."""

    def __repr__(self):
        return "Debug"


class OrderedDebugEffect(DebugEffect):
    """Ordered debug callbacks: `effect = "debug_ordered"`."""

    def __repr__(self):
        return "OrderedDebug"


__all__ = ["DebugEffect", "OrderedDebugEffect", "breakpoint", "callback",
           "inspect_array_sharding", "log", "print", "visualize_array_sharding",
           "visualize_sharding"]
