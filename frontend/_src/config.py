"""JAX-private: jax._src.config, the module JAX's own tests (and some libraries) reach
config through: `config.parse_flags_with_absl()`, `config.update(name, value)`, and each
option's State by its short name (`with config.enable_x64(True):`,
`config.numpy_rank_promotion('raise')`). Every State here is mjax.config's."""
from __future__ import annotations

import os as _os
import sys as _sys

from mjax.config import (State, bool_option, config, enum_option, int_option,  # noqa: F401
                         string_option)
from mjax.config.jax_options import ExplicitX64Mode  # noqa: F401

update = config.update
parse_flags_with_absl = config.parse_flags_with_absl
_read = config.read


def bool_env(name: str, default: bool) -> bool:
    """An environment variable read as a boolean (JAX's spellings: 'y', 'yes', 't',
    'true', 'on', '1' and their negations)."""
    text = _os.getenv(name)
    if text is None:
        return default
    text = text.lower()
    if text in ("y", "yes", "t", "true", "on", "1"):
        return True
    if text in ("n", "no", "f", "false", "off", "0"):
        return False
    raise ValueError(f"invalid truth value {text!r} for environment {name!r}")


def _plain(kind, name, kwargs):
    if kwargs:
        raise NotImplementedError(f"config.{kind}({name!r}, ...): mjax registers options "
                                  f"without JAX's hooks ({', '.join(sorted(kwargs))})")


def bool_state(name: str, default: bool, help: str = "", **kwargs) -> State:
    """Registers a boolean option (JAX's signature, hooks aside)."""
    _plain("bool_state", name, kwargs)
    return bool_option(name, default, help)


def int_state(name: str, default, help: str = "", **kwargs) -> State:
    _plain("int_state", name, kwargs)
    return int_option(name, default, help, optional=default is None)


def string_state(name: str, default, help: str = "", **kwargs) -> State:
    _plain("string_state", name, kwargs)
    return string_option(name, default, help, optional=default is None)


def enum_state(name: str, enum_values, default, help: str = "", **kwargs) -> State:
    _plain("enum_state", name, kwargs)
    return enum_option(name, default, tuple(enum_values), help)


# (JAX's flags are its options too)
bool_flag, int_flag, string_flag = bool_state, int_state, string_state


def _states() -> dict:
    """{option name: its State}, for every option registered so far."""
    return {o.name: State(config, o) for o in config._options.values()}


def __getattr__(name):
    if name == "config_states":
        return _states()
    own = getattr(_sys.modules["mjax.config"], name, None)
    if isinstance(own, State):
        return own
    for option in (f"jax_{name}", name):
        if option in config._options:
            return State(config, config._options[option])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r} (mjax has no "
                         f"config option jax_{name})")
