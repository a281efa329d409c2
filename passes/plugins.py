"""Pass plugins: a Python file whose passes (`@register_pass` classes) become flags of
`mjax-opt --load-pass-plugin=FILE` and names jit's pass lists can use.

    classes = load_pass_plugin("my_passes.py")   # runs the file once per process

A plugin that fails to load is a PluginError saying `file:line:col: error: ...` at the
plugin's line that failed.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import traceback

from mjax.passes.registry import PASSES

_LOADED: dict[str, list] = {}   # real path -> the pass classes it registered


class PluginError(Exception):
    """A pass plugin could not be loaded; the message is `file:line:col: error: ...`."""


def load_pass_plugin(path: str) -> list[type]:
    """Runs the plugin file at `path` (once per process) and returns the Pass classes it
    registered."""
    real = os.path.realpath(path)
    if real in _LOADED:
        return list(_LOADED[real])
    if not os.path.isfile(real):
        raise PluginError(f"{path}: error: cannot load pass plugin: no such file")
    # A module name of its own per file, so two plugins named alike do not collide.
    stem = os.path.splitext(os.path.basename(real))[0]
    name = f"mjax_pass_plugin_{stem}_{hashlib.sha1(real.encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, real)
    module = importlib.util.module_from_spec(spec)
    before = dict(PASSES)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        sys.modules.pop(name, None)
        raise PluginError(f"{path}:{e.lineno or 1}:{e.offset or 1}: error: {e.msg}"
                          ) from None
    except Exception as e:  # noqa: BLE001 - any failure of the user's file is reported
        sys.modules.pop(name, None)
        _restore(before)
        raise PluginError(f"{_where(e, real, path)}: error: {type(e).__name__}: {e}"
                          ) from None
    added = [cls for flag, cls in PASSES.items()
             if cls.__module__ == name and before.get(flag) is not cls]
    if not added:
        raise PluginError(f"{path}: error: the plugin registers no pass (decorate a "
                          f"subclass of mjax.passes.Pass with @mjax.passes.register_pass)")
    _LOADED[real] = added
    return list(added)


def plugin_failure(cls: type, e: BaseException) -> str | None:
    """For an exception a plugin's pass `cls` raised (not a PassError): `pass 'flag'
    failed at plugin.py:line: Type: message`; None if `cls` is not a plugin's."""
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if path is None or os.path.realpath(path) not in _LOADED:
        return None
    where = _where(e, os.path.realpath(path), path)
    return f"pass '{cls.flag}' failed at {where}: {type(e).__name__}: {e}"


def _restore(before: dict) -> None:
    """Unregisters what a plugin that failed half-way had registered."""
    for flag in list(PASSES):
        if flag not in before:
            del PASSES[flag]


def _where(e: BaseException, real: str, path: str) -> str:
    """`path:line:1` of the plugin's innermost line in the traceback of `e`."""
    line = None
    for frame in traceback.extract_tb(e.__traceback__):
        if os.path.realpath(frame.filename) == real:
            line = frame.lineno
    return f"{path}:{line}:1" if line is not None else path


__all__ = ["PluginError", "load_pass_plugin", "plugin_failure"]
