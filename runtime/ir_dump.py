"""jax_dump_ir_to: every program a backend compiles, written as StableHLO text to a
directory (`jax_ir0000_jit_f_compile.mlir`, numbered in compile order), as JAX dumps them.
The frontend's config options set `settings` (frontend/config: jax_dump_ir_to,
jax_dump_ir_modes, jax_include_debug_info_in_dumps)."""
from __future__ import annotations

import itertools
import os
import pathlib
import re
import warnings
from dataclasses import dataclass

from jaxlib.mlir import ir

from mjax.dialect import context


@dataclass
class Settings:
    to: str = ""                  # a directory, "sponge" ($TEST_UNDECLARED_OUTPUTS_DIR), or ""
    modes: str = "stablehlo"      # comma-separated: stablehlo, jaxpr, jaxpr_html,
    #                               eqn_count_pprof
    debug_info: bool = True       # keep source locations in the dump


settings = Settings()
_counter = itertools.count()
# (the jaxpr modes are written by the frontend, before lowering: frontend/jaxpr/dump.py)
_WRITTEN_MODES = {"stablehlo", "jaxpr", "jaxpr_html", "eqn_count_pprof"}
_UNSAFE = re.compile(r"[^\w.)( -]")    # (characters a file name does not keep, as JAX)
_warned: set = set()


def dump_dir() -> pathlib.Path | None:
    """Where dumps go (made if missing), or None when dumping is off."""
    to = settings.to
    if not to:
        return None
    if to == "sponge":
        to = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR", "")
        if not to:
            return None
    path = pathlib.Path(to)
    path.mkdir(parents=True, exist_ok=True)
    return path


def modes() -> list[str]:
    """The dump modes asked for (jax_dump_ir_modes), each unknown one warned of once."""
    asked = [m.strip() for m in settings.modes.split(",") if m.strip()]
    for mode in set(asked) - _WRITTEN_MODES - _warned:
        _warned.add(mode)
        warnings.warn(f"jax_dump_ir_modes: unknown mode {mode!r} (mjax writes "
                      f"{', '.join(sorted(_WRITTEN_MODES))})", stacklevel=3)
    return asked


def dump(stablehlo_text: str, stage: str = "compile") -> str | None:
    """Writes a program about to be compiled (when dumping is on); returns the file's
    name, or None."""
    out = dump_dir()
    if out is None:
        return None
    if "stablehlo" not in modes():
        return None
    match = re.search(r"module @([\w.$-]+)", stablehlo_text)
    name = match.group(1) if match else "module"
    text = stablehlo_text
    if not settings.debug_info:
        text = _without_locations(text)
    safe = _UNSAFE.sub("", name)
    file = f"jax_ir{next(_counter):04d}_{safe}_{stage}.mlir"
    (out / file).write_text(text)
    return file


def _without_locations(text: str) -> str:
    with context():
        return ir.Module.parse(text).operation.get_asm(enable_debug_info=False)


__all__ = ["Settings", "dump", "dump_dir", "modes", "settings"]
