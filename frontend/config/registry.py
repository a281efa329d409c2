"""The option registry: `Option`, its validators (JAX's messages), `Config` (values,
sources, thread-local overrides, jit's trace key) and the `*_option` functions that
register options. The options themselves live in mjax/config/__init__.py and
jax_options.py."""
from __future__ import annotations

import contextlib
import os
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Sequence


@dataclass
class Option:
    name: str
    default: Any
    doc: str
    parse: Callable[[Any], Any]              # validates (raises ValueError), normalizes
    affects_tracing: bool = False            # part of jit's cache key
    on_change: Callable[[Any], None] | None = None
    parse_env: Callable[[str], Any] | None = None   # env text -> value (default: parse)
    # Called with a thread's overriding value when a context manager sets it, and with
    # the thread's previous override (None: none) when the context ends.
    on_override: Callable[[Any], None] | None = None

    def env_names(self) -> list[str]:
        """Environment variables that set this option, the first present one wins."""
        if not self.name.startswith(("jax_", "mjax_", "_")):
            return [self.name.upper()]     # (JAX's, for options without the jax_ prefix)
        stem = self.name.split("_", 1)[1].upper()
        if self.name.startswith("mjax_"):
            return ["MJAX_" + stem]
        return ["MJAX_" + stem, "JAX_" + stem]


# ---- validators (messages as JAX words them) -------------------------------------------
def _bool(v) -> bool:
    if isinstance(v, str):
        low = v.strip().lower()
        if low in ("1", "true", "t", "yes", "y", "on"):
            return True
        if low in ("0", "false", "f", "no", "n", "off", ""):
            return False
    elif isinstance(v, (bool, int)) and v in (0, 1):
        return bool(v)
    raise ValueError(f"new bool config value must be a bool (or 0/1, 'true'/'false'), "
                     f"got {v} of type {type(v)}.")


def _enum(choices: Sequence[str], optional: bool):
    def parse(v):
        if v is None and optional:
            return None
        if isinstance(v, str) and v in choices:
            return v
        none = "None or " if optional else ""
        raise ValueError(f"new enum value must be {none}in {list(choices)}, got {v} "
                         f"of type {type(v)}.")
    return parse


def _enum_env(choices, optional):
    parse = _enum(choices, optional)
    return lambda text: parse(None if optional and text.lower() in ("", "none") else text)


def _int(optional: bool):
    # (JAX's int options all accept None too; `optional` only documents the intent.)
    def parse(v):
        if v is None:
            return None
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        raise ValueError(f"new int config value must be None or of type int, got {v} of "
                         f"type {type(v)}")
    return parse


def _float(v):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    raise ValueError(f"new float config value must be of type float, got {v!r} of type "
                     f"{type(v)}")


def _string(optional: bool):
    def parse(v):
        if v is None and optional:
            return None
        if isinstance(v, str):
            return v
        none = "None or " if optional else ""
        raise ValueError(f"new string config value must be {none}of type str, got {v} "
                         f"of type {type(v)}.")
    return parse


def _optional_env(parse):
    return lambda text: parse(None if text == "" else text)


# ---- the registry ------------------------------------------------------------------------
class Config:
    """Holds option values; attribute access reads (`config.jax_enable_x64`)."""

    def __init__(self):
        object.__setattr__(self, "_options", {})
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_sources", {})
        object.__setattr__(self, "_local", _ThreadOverrides())
        object.__setattr__(self, "_trace_key", None)
        # A token per context manager active in any thread (config's, a mesh's): reads
        # skip the thread-local lookup while it is empty. (A list, not a count: append
        # and pop are atomic, as a count's update is only under a lock, which cost a
        # `with` around a jit call 0.5 us.)
        object.__setattr__(self, "_overriding", [])

    def register(self, opt: Option) -> "State":
        if opt.name in self._options:
            raise ValueError(f"config option {opt.name} is already defined")
        self._options[opt.name] = opt
        value, source = opt.parse(opt.default), "default"
        for env in opt.env_names():
            if env in os.environ:
                text = os.environ[env]
                try:
                    value = (opt.parse_env or opt.parse)(text)
                except ValueError as e:
                    raise ValueError(f"environment variable {env}={text!r}: {e}") from None
                source = f"env {env}"
                break
        self._values[opt.name] = value
        self._sources[opt.name] = source
        object.__setattr__(self, "_trace_key", None)
        if opt.on_change is not None and source != "default":
            opt.on_change(value)
        return State(self, opt)

    def _check(self, name: str) -> Option:
        try:
            return self._options[name]
        except KeyError:
            raise AttributeError(f"Unrecognized config option: {name}") from None

    def _parse(self, opt: Option, value):
        return opt.parse(value)

    def update(self, name: str, value) -> None:
        """Sets option `name` (JAX spelling) for this process."""
        opt = self._check(name)
        new = self._parse(opt, value)
        if opt.on_change is not None:
            opt.on_change(new)     # (may refuse: raises before anything changes)
        self._values[name] = new
        self._sources[name] = "update"
        object.__setattr__(self, "_trace_key", None)

    def parse_flags_with_absl(self, argv=None) -> None:
        """Applies command-line flags naming options (`--jax_enable_x64`, `--nojax_...`,
        `--jax_default_matmul_precision=high`) from argv (default sys.argv); other
        arguments are left alone. JAX: jax.config.parse_flags_with_absl (absl's flag
        parser; mjax reads the same spellings without absl)."""
        for arg in sys.argv[1:] if argv is None else argv:
            if not arg.startswith("--"):
                continue
            name, eq, text = arg[2:].partition("=")
            if not eq and name.startswith("no") and name[2:] in self._options:
                self.update(name[2:], False)
            elif name in self._options:
                self.update(name, text if eq else True)
        # JAX's parse leaves absl's flags parsed (its options are absl flags): absltest
        # cases of a program that uses absl then read --test_tmpdir (flax's tests, orbax).
        absl_flags = sys.modules.get("absl.flags")
        if absl_flags is not None and not absl_flags.FLAGS.is_parsed():
            absl_flags.FLAGS([""], known_only=True)

    def read(self, name: str):
        """The current value (a thread's context-manager override, else process-wide)."""
        if self._overriding:
            overrides = self._local.overrides
            if overrides and name in overrides:
                return overrides[name]
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"Unrecognized config option: {name}") from None

    def source(self, name: str) -> str:
        """Where the process-wide value came from: 'default', 'env <VAR>' or 'update'."""
        self._check(name)
        return self._sources[name]

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in self._options:
            raise AttributeError(f"'Config' object has no attribute '{name}'")
        return self.read(name)

    def __setattr__(self, name, value):
        raise AttributeError(f"use config.update({name!r}, value) to set config options")

    @property
    def x64_enabled(self) -> bool:
        """Whether 64-bit types are on (JAX: config.x64_enabled)."""
        return bool(self.read("jax_enable_x64"))

    @property
    def values(self) -> dict:
        """{name: current value} of every option (user contexts left out)."""
        return {name: self.read(name) for name in self._options if not name.startswith("_")}

    def override(self, **values) -> "_Override":
        """Temporarily sets options in this thread: `with config.override(jax_enable_x64=True)`
        (also a decorator)."""
        return _Override(self, {k: self._parse(self._check(k), v) for k, v in values.items()})

    def trace_state(self) -> tuple:
        """Values of the options that change tracing (part of jit's cache key)."""
        key = self._trace_key
        if key is None:
            key = tuple(self._values[o.name] for o in self._options.values()
                        if o.affects_tracing)
            object.__setattr__(self, "_trace_key", key)
        if self._overriding:
            local = self._local
            overrides = local.overrides
            if overrides:
                # (made once per process-wide key and set of overrides: a `with` around
                # each call of a jit enters equal overrides again and again, mostly the
                # same dict: State keeps its parsed overrides, and none is ever changed)
                made = local.trace_state
                if made is None or made[0] is not key or (
                        made[1] is not overrides and made[1] != overrides):
                    made = local.trace_state = (key, overrides, tuple(
                        self.read(o.name) for o in self._options.values()
                        if o.affects_tracing))
                return made[2]
        return key

    def trace_state_override(self, state: tuple) -> "_Override":
        """A context manager under which trace_state() is `state` again (what one gave
        before): a trace made again later, as lowering for another platform does, sees
        the options its first trace saw. Options already equal are left alone."""
        opts = [o for o in self._options.values() if o.affects_tracing]
        return _Override(self, {o.name: v for o, v in zip(opts, state)
                                if not (self.read(o.name) is v or self.read(o.name) == v)})

    def options(self) -> list[Option]:
        """Every option, user contexts (make_user_context) left out."""
        return [o for o in self._options.values() if not o.name.startswith("_")]

    def describe(self) -> str:
        """One line per option: name, value, where the value came from, and its doc."""
        rows = [(o.name, repr(self.read(o.name)), self._sources[o.name], o.doc)
                for o in sorted(self.options(), key=lambda o: o.name)]
        w0 = max(len(r[0]) for r in rows)
        w1 = max(len(r[1]) for r in rows)
        w2 = max(len(r[2]) for r in rows)
        return "\n".join(f"{n:<{w0}}  {v:<{w1}}  {s:<{w2}}  {d}" for n, v, s, d in rows)


class _ThreadOverrides(threading.local):
    """A thread's config context managers: its overrides ({name: value}; None: none), the
    overrides each active one replaced, and trace_state's tuple for them. (Class
    attributes are the defaults: reading one needs no failed lookup.)"""

    overrides = None
    trace_state = None

    def __init__(self):
        self.saved = []


class _Override(contextlib.ContextDecorator):
    """config.override's context manager: a class, not a generator, as jit calls under
    one enter and leave it each time (the thread's previous overrides kept on a stack of
    the thread's, so one object may be entered inside itself, or in several threads)."""

    __slots__ = ("_config", "_parsed", "_hooks", "_local", "_tokens")

    def __init__(self, config_: Config, parsed: dict, hooks=None):
        self._config = config_
        self._parsed = parsed        # (never changed: the thread's overrides may be it)
        self._hooks = hooks if hooks is not None else [
            (config_._options[k].on_override, k) for k in parsed
            if config_._options[k].on_override is not None]
        # (read on each entry and exit: a `with` around each call of a jit)
        self._local, self._tokens = config_._local, config_._overriding

    def __enter__(self):
        local, parsed = self._local, self._parsed
        old = local.overrides
        local.saved.append(old)
        local.overrides = {**old, **parsed} if old else parsed
        for hook, k in self._hooks:
            hook(parsed[k])
        self._tokens.append(None)

    def __exit__(self, typ, value, traceback):
        local = self._local
        old = local.saved.pop()
        local.overrides = old
        for hook, k in self._hooks:
            hook((old or {}).get(k))
        self._tokens.pop()
        return False

    def _recreate_cm(self):     # (ContextDecorator: each decorated call enters afresh)
        return _Override(self._config, self._parsed, self._hooks)


_NO_DEFAULT = object()


class State:
    """One option as JAX exposes it at top level: `.value`, and called with a new value it
    is a thread-local context manager (`with mjax.enable_x64(True): ...`)."""

    def __init__(self, config_: Config, opt: Option):
        self._config = config_
        self._option = opt
        self.__name__ = opt.name[4:] if opt.name.startswith("jax_") else opt.name
        self.__doc__ = opt.doc
        self._made: dict = {}     # (type, value) -> its context manager

    @property
    def value(self):
        return self._config.read(self._option.name)

    def __call__(self, new_val=_NO_DEFAULT):
        if new_val is _NO_DEFAULT and self._option.parse is _bool:
            new_val = True      # (as JAX: `with jax.check_tracer_leaks():` turns it on)
        if new_val is _NO_DEFAULT:
            raise TypeError(f"Context manager for {self.__name__} config option requires "
                            f"an argument representing the new value for the config "
                            f"option.")
        key = (type(new_val), new_val)     # (True and 1 are equal, not the same value)
        try:
            made = self._made.get(key)
        except TypeError:       # (an unhashable value: parsed each time)
            return self._config.override(**{self._option.name: new_val})
        if made is None:
            # (one object per value, parsed once: `with jax.<option>(v):` around each call
            # of a jit; an _Override may be entered inside itself and in several threads)
            made = self._config.override(**{self._option.name: new_val})
            if len(self._made) < 64:
                self._made[key] = made
        return made

    def __bool__(self):
        raise TypeError(f"bool() not supported for config option {self._option.name}; "
                        f"use .value")

    def __repr__(self):
        return f"State({self._option.name}={self.value!r})"


config = Config()


def option(name: str, default, doc: str, parse: Callable[[Any], Any], *,
           affects_tracing: bool = False, on_change=None, parse_env=None,
           on_override=None) -> State:
    """Registers an option with a custom validator `parse` (raise ValueError to reject)."""
    return config.register(Option(name, default, doc, parse, affects_tracing, on_change,
                                  parse_env, on_override))


def bool_option(name: str, default: bool, doc: str, **kw) -> State:
    return option(name, default, doc, _bool, **kw)


def enum_option(name: str, default, choices: Sequence[str], doc: str, *,
                optional: bool = False, **kw) -> State:
    """A string option from `choices` (None allowed too when `optional`)."""
    return option(name, default, doc, _enum(tuple(choices), optional),
                  parse_env=_enum_env(tuple(choices), optional), **kw)


def int_option(name: str, default, doc: str, *, optional: bool = False, **kw) -> State:
    return option(name, default, doc, _int(optional),
                  parse_env=_optional_env(lambda t: _int(optional)(
                      None if t is None else int(t))), **kw)


def float_option(name: str, default: float, doc: str, **kw) -> State:
    return option(name, default, doc, _float, parse_env=lambda t: _float(float(t)), **kw)


def string_option(name: str, default, doc: str, *, optional: bool = False, **kw) -> State:
    return option(name, default, doc, _string(optional),
                  parse_env=_optional_env(_string(optional)) if optional else None, **kw)
