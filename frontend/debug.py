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

from mjax import tree_util
from mjax.callbacks import call


# ---- arguments: arrays are staged, everything else is passed through -----------------------
def _is_array_leaf(x) -> bool:
    from mjax.core import aval_of_value
    try:
        aval_of_value(x)
        return True
    except (TypeError, OverflowError):
        return False


def _split(args, kwargs):
    """(tree, array leaves, {position: other leaf}). JAX: debugging._split_callback_args."""
    leaves, tree = tree_util.tree_flatten((args, kwargs))
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


def _freeze(static: dict):
    return tuple(sorted(static.items(), key=lambda kv: kv[0]))


def _stage(name: str, fn: Callable, args, kwargs, ordered: bool, key) -> None:
    tree, dyn, static = _split(args, kwargs)

    def flat(*arrays):
        a, k = _merge(tree, arrays, static)
        fn(*a, **k)
        return ()
    from mjax.core import current_trace
    try:
        call(name, "debug_ordered" if ordered else "debug", flat,
             (key, tree, _freeze(static), ordered), dyn, [])
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
    from mjax.core import user_frame
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
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
            from mjax.sharding import SingleDeviceSharding
            from mjax.api import devices
            sharding = SingleDeviceSharding(devices()[0])
        callback(sharding)
    tree_util.tree_map(inspect, value)


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
    commas). JAX: jax.debug.visualize_sharding (which draws with `rich`)."""
    if len(shape) > 2:
        raise ValueError(f"Number of dimensions of `shape` must be <= 2 for "
                         f"visualization, got {len(shape)}")
    shape = tuple(shape)
    cells = _blocks(shape, sharding)
    rows = sorted({r for r, _ in cells})
    cols = sorted({c for _, c in cells})
    labels = {k: f"{v[0][0]} {','.join(str(i) for _, i in v)}" for k, v in cells.items()}
    width = max(len(t) for t in labels.values()) + 4
    width = max(width, min_width // max(len(cols), 1))
    width = min(max(int(round(width * scale)), 3), max(max_width // max(len(cols), 1), 3))
    height = 3 if len(shape) == 2 else 1
    out = [_rule("┌", "┬", "┐", len(cols), width)]
    for i, r in enumerate(rows):
        for line in range(height):
            text = [labels.get((r, c), "") if line == height // 2 else "" for c in cols]
            out.append("│" + "│".join(t[:width].center(width) for t in text) + "│")
        if i + 1 < len(rows):
            out.append(_rule("├", "┼", "┤", len(cols), width))
    out.append(_rule("└", "┴", "┘", len(cols), width))
    sys.stdout.write("\n".join(out) + "\n")


def _rule(left, mid, right, n, width) -> str:
    return left + mid.join("─" * width for _ in range(n)) + right


def _blocks(shape, sharding) -> dict:
    """(row start, col start) -> [(platform, device id), ...] for each block."""
    index_map = getattr(sharding, "devices_indices_map", None)
    if index_map is not None:
        mapping = index_map(shape)
    else:
        mapping = {d: tuple(slice(None) for _ in shape) for d in _devices_of(sharding)}
    cells: dict = {}
    for dev, index in mapping.items():
        index = tuple(index) + (slice(None),) * (2 - len(index))
        key = tuple((s.start or 0) if isinstance(s, slice) else int(s) for s in index[:2])
        if len(shape) < 2:      # a vector's blocks lie side by side
            key = (0, key[0])
        cells.setdefault(key, []).append(
            (getattr(dev, "platform", "cpu").upper(), getattr(dev, "id", 0)))
    for devs in cells.values():
        devs.sort(key=lambda d: d[1])
    return cells


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
