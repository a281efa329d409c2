"""`python -m mjax script.py [args]` / `python -m mjax -m module [args]` /
`python -m mjax -c "code" [args]`: run a program
written for JAX on mjax (`import jax` gives mjax's modules; see mjax.jax_alias).
`python -m mjax --install-env-hook` makes MJAX_ALIAS_JAX=1 do the same for any process
of this environment."""
import os
import runpy
import sys

from mjax.jax_alias import alias_jax, install_env_hook

USAGE = ("usage: python -m mjax script.py [args...]\n"
         "       python -m mjax -m module [args...]\n"
         "       python -m mjax -c code [args...]\n"
         "       python -m mjax --install-env-hook [site-packages dir]")


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    if argv[0] == "--install-env-hook":
        print(f"wrote {install_env_hook(argv[1] if len(argv) > 1 else None)}")
        return 0
    alias_jax()
    if argv[0] in ("-m", "-c"):
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        if argv[0] == "-c":     # (as `python -c`: sys.argv[0] is "-c", cwd on the path)
            sys.argv = ["-c"] + argv[2:]
            sys.path[0] = ""
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
            return 0
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))  # (as `python script.py`)
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
