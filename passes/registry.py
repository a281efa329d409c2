"""The pass registry `mjax-opt` and Python share, and the pipeline runner.

Our passes are Python classes run directly (no MLIR callback threads, and their errors
propagate as `PassError`). Any other name in a pipeline is an upstream MLIR pass
(`canonicalize`, `cse`, `inline`, `symbol-dce`, `sdy-...`) run through `PassManager`.

    run_pipeline(module, "builtin.module(jaxpr-verify,jaxpr-to-stablehlo,canonicalize)")
"""
from __future__ import annotations

import dataclasses
import re
import threading
from typing import Callable

from jaxlib.mlir import ir, passmanager

from mjax.dialect.context import context
from mjax.passes import analyses

PASSES: dict[str, type["Pass"]] = {}


class PassError(Exception):
    """A pass failed at an op: carries the op's location and a message."""

    def __init__(self, where, message: str):
        self.location = where.location if hasattr(where, "location") else where
        self.message = message
        super().__init__(f"{format_location(self.location)}: error: {message}")


def format_location(loc: ir.Location | None, default_file: str | None = None) -> str:
    """`file:line:col` for a location (looking through callsite/fused/name locations)."""
    if loc is None:
        return default_file or "<unknown>"
    text = str(loc)
    m = re.search(r'"([^"]*)":(\d+):(\d+)', text)
    if not m:
        return default_file or "<unknown>"
    filename = m.group(1)
    if filename == "-" and default_file:
        filename = default_file
    return f"{filename}:{m.group(2)}:{m.group(3)}"


def op_error(op, message: str) -> PassError:
    """A PassError for `op`, prefixed like MLIR's: `'jaxpr.mul' op ...`."""
    return PassError(op, f"'{op.operation.name}' op {message}")


# Where jit runs a user's pass (docs/passes.md): on the traced module, after
# transformations (grad, vmap, ...) are expanded, just before lowering (the last `jaxpr`
# form), or on the StableHLO module.
POINTS = ("after-tracing", "after-expansion", "before-lowering", "after-lowering")


class Pass:
    """Base of mjax passes: a flag name, options as dataclass fields, and `run(module)`.

    `point` says where jit runs it (one of POINTS); `mjax-opt` runs it where its flag is.
    """

    flag: str = ""
    summary: str = ""
    point: str = "before-lowering"

    def run(self, module: ir.Module) -> None:
        raise NotImplementedError

    def options(self) -> dict:
        """The pass's options: its dataclass fields (else its instance attributes)."""
        if dataclasses.is_dataclass(self):
            return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return dict(vars(self))

    def key(self) -> tuple:
        """What identifies this configured pass in jit's cache key: class and options."""
        items = []
        for name, value in sorted(self.options().items()):
            try:
                hash(value)
            except TypeError:
                value = repr(value)
            items.append((name, value))
        return (type(self), self.point, tuple(items))


_FLAG = re.compile(r"[a-z0-9][a-z0-9_.\-]*")


def register_pass(flag: str) -> Callable[[type], type]:
    """Class decorator: makes `cls` the pass behind `--flag`. First docstring line = summary.

    A flag names one pass: registering another class under a taken flag is a ValueError
    (the same class defined again, by a plugin loaded anew, replaces it)."""
    if not isinstance(flag, str) or not _FLAG.fullmatch(flag):
        raise ValueError(f"pass flag {flag!r} must be lowercase letters, digits, '-', '_' "
                         f"or '.' (as in --{str(flag).lower()})")

    def wrap(cls):
        if not (isinstance(cls, type) and issubclass(cls, Pass)):
            raise TypeError(f"@register_pass({flag!r}) decorates a subclass of "
                            f"mjax.passes.Pass, got {cls!r}")
        if cls.point not in POINTS:
            raise ValueError(f"pass '{flag}' has point {cls.point!r}; the points are "
                             f"{', '.join(POINTS)}")
        old = PASSES.get(flag)
        if old is not None and (old.__module__, old.__qualname__) != (
                cls.__module__, cls.__qualname__):
            raise ValueError(f"pass flag '{flag}' is taken by {old.__module__}."
                             f"{old.__qualname__}")
        cls.flag = flag
        cls.summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        PASSES[flag] = cls
        return cls
    return wrap


_PARSED: dict = {}   # (class, options text) -> its keyword arguments, parsed once


def make_pass(flag: str, options: str = "") -> Pass:
    """Instantiates a registered pass from `--flag="key=value key2=value2"` options."""
    cls = PASSES[flag]
    # (Every jit lowering makes the same few passes: their options are parsed once.)
    kwargs = _PARSED.get((cls, options))
    if kwargs is None:
        kwargs = _parse_options(cls, flag, options)
        if len(_PARSED) >= 1024:
            _PARSED.clear()
        _PARSED[(cls, options)] = kwargs
    return cls(**kwargs)


def _parse_options(cls: type, flag: str, options: str) -> dict:
    fields = {f.name: f for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else {}
    kwargs = {}
    for item in options.split():
        key, _, value = item.partition("=")
        name = key.replace("-", "_")
        if name not in fields:
            raise ValueError(f"pass '{flag}' has no option '{key}'"
                             + (f" (options: {', '.join(fields)})" if fields else ""))
        ftype = fields[name].type
        if ftype in ("int", int):
            kwargs[name] = int(value)
        elif ftype in ("bool", bool):
            kwargs[name] = value.lower() in ("1", "true", "")
        elif ftype in ("float", float):
            kwargs[name] = float(value)
        else:
            kwargs[name] = value
    return kwargs


def _split_top_level(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "({" and depth >= 0:
            depth += 1
        elif ch in ")}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_pipeline(text: str) -> list[tuple[str, str]]:
    """`builtin.module(a,b{opt=1})` or `a,b` -> [(name, options), ...]."""
    text = text.strip()
    m = re.fullmatch(r"builtin\.module\((.*)\)", text, re.S)
    if m:
        text = m.group(1)
    steps = []
    for part in _split_top_level(text):
        m = re.fullmatch(r"([\w.\-]+)(?:\{(.*)\})?", part, re.S)
        if not m:
            raise ValueError(f"cannot parse pass pipeline element '{part}'")
        steps.append((m.group(1), m.group(2) or ""))
    return steps


def run_pipeline(module: ir.Module, pipeline, *, after_each=None) -> None:
    """Runs `pipeline` (text, or a list of (name, options) and Pass instances) on module;
    `after_each(name, module)` is called after every pass (used by --print-ir-after-all
    and debug verification)."""
    steps = parse_pipeline(pipeline) if isinstance(pipeline, str) else list(pipeline)
    if after_each is None:
        steps = _trusting_upstream(steps)
    try:
        for step in steps:
            # (the facts passes share: what a pass does not keep is forgotten after it)
            analyses.begin_pass(module)
            try:
                name = _run_step(step, module)
            except BaseException:
                analyses.end_pass(module, failed=True)
                raise
            analyses.end_pass(module)
            if after_each is not None:
                after_each(name, module)
    finally:
        analyses.forget(module)


def _run_step(step, module: ir.Module) -> str:
    """Runs one step of a pipeline (a Pass, or an mjax or upstream pass by name and
    options); returns its name."""
    if isinstance(step, Pass):
        step.run(module)
        return step.flag or type(step).__name__
    if step[0] in PASSES:
        make_pass(*step).run(module)
    else:
        _upstream(*step).run(module.operation)
    return step[0]


_PASS_MANAGERS = threading.local()   # per thread: a pass manager is not reentrant
_UNVERIFIED = "mjax.unverified"   # a step's name: upstream passes run without the verifier


def _trusting_upstream(steps: list) -> list:
    """`steps` with each run of two or more upstream passes (`canonicalize, cse,
    symbol-dce` after lowering) as the first one, which verifies the module after it as
    usual (so what mjax's passes made is checked), then the others in one pass manager
    without the verifier: they are upstream MLIR's own passes on a verified module, and
    the verifier after each one was ~70% of their time."""
    out, run = [], []
    for step in steps + [None]:
        if step is not None and not isinstance(step, Pass) and step[0] not in PASSES:
            run.append(step)
            continue
        if len(run) > 1:
            out += [run[0], (_UNVERIFIED, tuple(run[1:]))]
        else:
            out += run
        run = []
        if step is not None:
            out.append(step)
    return out


def _upstream(name: str, options) -> passmanager.PassManager:
    """The PassManager running upstream pass `name`, parsed once per thread: parsing and
    a first run's initialization (canonicalize collects every dialect's patterns) cost
    more than running it on a small module."""
    managers = getattr(_PASS_MANAGERS, "by_spec", None)
    if managers is None:
        managers = _PASS_MANAGERS.by_spec = {}
    verify = name != _UNVERIFIED     # (else `options` are the (name, options) steps)
    spec = (f"{name}{{{options}}}" if options else name) if verify else ",".join(
        f"{n}{{{o}}}" if o else n for n, o in options)
    pm = managers.get((spec, verify))
    if pm is None:
        try:
            pm = passmanager.PassManager.parse(f"builtin.module({spec})", context())
        except (ValueError, ir.MLIRError) as e:
            if not verify:
                for step in options:     # (the error names the pass that is unknown)
                    _upstream(*step)
            raise ValueError(f"unknown pass '{name}': {e}") from None
        pm.enable_verifier(verify)
        managers[(spec, verify)] = pm
    return pm
