"""Run code written for JAX on mjax: after `alias_jax()`, `import jax` and every
`import jax.X` give mjax's module objects (`mjax`, `mjax.X`), and real jax is never
imported, even when it is installed.

    python -m mjax script.py [args]       # the script runs as __main__, aliased
    python -m mjax -m pytest tests/       # a module run as __main__ (as python -m)
    mjax.alias_jax()                      # in a program, before its first `import jax`
    MJAX_ALIAS_JAX=1 python script.py     # any process, once `python -m mjax
                                          # --install-env-hook` has added the hook

`jax.X` that mjax lacks raises ModuleNotFoundError naming it (docs/api_coverage.md says
why each is missing); `jax.__version__` is the JAX release mjax follows.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys
import sysconfig

ENV_VAR = "MJAX_ALIAS_JAX"
HOOK_FILE = "mjax-jax-alias.pth"
# A .pth line runs at interpreter start; it imports mjax only when the variable is set.
HOOK_LINE = (f"import os; os.environ.get({ENV_VAR!r}, '') not in ('', '0') and "
             "__import__('mjax.jax_alias').jax_alias.alias_jax()\n")


class JaxAliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `jax` and `jax.*` as `mjax` and `mjax.*` (first on sys.meta_path)."""

    def find_spec(self, name, path=None, target=None):
        if name == "jax" or name.startswith("jax."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        ours = "m" + spec.name
        try:
            return importlib.import_module(ours)
        except ModuleNotFoundError as e:
            if e.name is None or not (ours == e.name or ours.startswith(e.name + ".")):
                raise  # (something else that module imports is missing)
            raise ModuleNotFoundError(
                f"No module named '{spec.name}': mjax lacks it (mjax runs code written for "
                f"JAX {_jax_version()} with mjax's own modules; docs/api_coverage.md lists "
                f"what mjax lacks and why)", name=spec.name) from None

    def exec_module(self, module):
        pass  # (the mjax module is already executed)


def _jax_version() -> str:
    return importlib.import_module("mjax.version").__version__


def _real_jax_loaded() -> list[str]:
    return [n for n, m in list(sys.modules.items())
            if (n == "jax" or n.startswith("jax.")) and m is not None
            and not getattr(m, "__name__", "").startswith("mjax")]


def alias_jax() -> None:
    """Makes `import jax` (and `jax.X`) give mjax's modules from now on, in this process.
    Call it before the first `import jax`; calling it again does nothing."""
    if any(isinstance(f, JaxAliasFinder) for f in sys.meta_path):
        return
    loaded = _real_jax_loaded()
    if loaded:
        raise RuntimeError(f"mjax.alias_jax(): real jax is already imported ({loaded[0]}); "
                           "call alias_jax() before the first `import jax`")
    sys.meta_path.insert(0, JaxAliasFinder())


def install_env_hook(site_dir: str | None = None) -> str:
    """Writes the .pth hook that honours MJAX_ALIAS_JAX=1 into `site_dir` (default: this
    environment's site-packages); returns its path."""
    path = os.path.join(site_dir or sysconfig.get_paths()["purelib"], HOOK_FILE)
    with open(path, "w") as f:
        f.write(HOOK_LINE)
    return path
