"""JAX's TPU interpreter as an oracle on the chip: `@on_the_host_cpu` runs a module-level
function in a child process whose jax sees only the CPU, when this process's jax has a
TPU (the suite's chip run, MJAX_TEST_TPU=1); elsewhere it calls the function here.

Why: over a multi-core `create_tensorcore_mesh` or several CPU devices, JAX 0.10.2's TPU
interpret mode gives wrong values or fails when its process has a TPU backend, even with
the CPU as the default device (on the chip, the eleventh session: zeros where a copy was
made, NaNs for `x + 1`, "Unknown PjRt global device ID for IFRT device ID 1", its kernel
exit report not printed); on the CPU machine it gives NumPy's values. An interpreter's
values do not depend on the backend it runs beside, so the child's are JAX's.

The function's arguments and result must pickle; what it prints reaches this process's
stdout (a test's capfd sees it), and what it raises is raised here.
"""
from __future__ import annotations

import functools
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

_IN_CHILD = "MJAX_TEST_CPU_ORACLE_CHILD"


def _jax_has_a_tpu() -> bool:
    import jax
    return jax.default_backend() == "tpu"


class OracleHung(RuntimeError):
    """The child did not finish in its time (JAX's interpreter hung there)."""


def on_the_host_cpu(fn=None, *, timeout: float = 600):
    """Runs `fn` in a CPU-only child process where jax has a TPU (see the module); a
    child still running after `timeout` seconds is killed and OracleHung raised."""
    if fn is None:
        return functools.partial(on_the_host_cpu, timeout=timeout)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if os.environ.get(_IN_CHILD) or not _jax_has_a_tpu():
            return fn(*args, **kwargs)
        return _in_child(fn, args, kwargs, timeout)
    return wrapper


def _in_child(fn, args, kwargs, timeout=600):
    path = Path(sys.modules[fn.__module__].__file__).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        call, result = Path(tmp, "call.pkl"), Path(tmp, "result.pkl")
        call.write_bytes(pickle.dumps((str(path), fn.__name__, args, kwargs)))
        env = dict(os.environ, JAX_PLATFORMS="cpu", MJAX_PLATFORM="cpu", MJAX_TEST_TPU="0",
                   **{_IN_CHILD: "1"})
        sys.stdout.flush()
        try:
            proc = subprocess.run([sys.executable, __file__, str(call), str(result)],
                                  env=env, stderr=subprocess.PIPE, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            raise OracleHung(f"{fn.__name__} ran over {timeout} s in its CPU child") from None
        if not result.exists():
            raise RuntimeError(f"{fn.__name__} died in its CPU child (exit "
                               f"{proc.returncode}):\n{proc.stderr[-4000:]}")
        ok, value = pickle.loads(result.read_bytes())
    if not ok:
        raise value
    return value


def _child(call: str, result: str) -> None:
    path, name, args, kwargs = pickle.loads(Path(call).read_bytes())
    sys.path[:0] = [str(Path(path).parent), str(Path(__file__).parent)]
    import importlib
    module = importlib.import_module(Path(path).stem)
    try:
        out = (True, getattr(module, name).__wrapped__(*args, **kwargs))
    except Exception as e:  # noqa: BLE001  (raised again in the parent)
        out = (False, e)
    sys.stdout.flush()
    Path(result).write_bytes(_pickled(out, name))


def _pickled(out, name: str) -> bytes:
    """`out` pickled; an exception whose arguments do not pickle (a tracer in them) as
    its class with its message, else as a RuntimeError naming it."""
    try:
        return pickle.dumps(out)
    except Exception as e:  # noqa: BLE001
        if out[0]:
            raise
        for again in (lambda: type(out[1])(str(out[1])),
                      lambda: RuntimeError(f"{name}: {out[1]!r} ({e})")):
            try:
                return pickle.dumps((False, again()))
            except Exception:  # noqa: BLE001,S112  (the next form)
                continue
        raise


if __name__ == "__main__":
    # Eight CPU devices, as the suite's conftest sets them for multi-device tests
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
    _child(*sys.argv[1:3])
