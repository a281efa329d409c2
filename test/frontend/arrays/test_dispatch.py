"""The one execute path (mjax/arrays/dispatch.py): every program the frontend runs goes through
`dispatch.execute`, which wraps outputs, tries a direct call first, and explains failures
(deleted arrays, errors host callbacks raise for their caller)."""
import os
import re

import numpy as np
import pytest
from jaxlib import _jax

import mjax
import mjax.numpy as jnp
from mjax.arrays import dispatch, eager, eager_fast
from mjax.jit import fast as jit_fast
from mjax.arrays.array import Array
from mjax.dialect.types import ShapedArray
from mjax.arrays.host_callbacks import raise_in_caller

from frontend_util import python_calls

FRONTEND = os.path.dirname(mjax.__file__)
# (installed from the wheel, these packages lie inside mjax/ beside the frontend's)
OTHER_LAYERS = {"runtime", "passes", "dialect"}


def test_execute_sites():
    """At most two `.execute(` calls in the frontend, all of them in dispatch.py."""
    sites = []
    for dirpath, _, files in os.walk(FRONTEND):
        if os.path.relpath(dirpath, FRONTEND).split(os.sep)[0] in OTHER_LAYERS:
            continue
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    for k, line in enumerate(f, 1):
                        if re.search(r"\.execute\(", line):
                            sites.append((os.path.relpath(path, FRONTEND), k))
    assert len(sites) <= 2, sites
    assert {p for p, _ in sites} == {"arrays/dispatch.py"}, sites


def _program():
    f = mjax.jit(lambda a: (a + 1.0, a * 2.0))
    x = jnp.arange(3.0)
    return f.lower(x).compile()._exe, x


def test_outputs_as_arrays_or_buffers():
    exe, x = _program()
    avals = [x.aval, x.aval]
    outs = dispatch.execute(exe, [x._buf], avals)
    assert all(type(o) is Array for o in outs)
    np.testing.assert_array_equal(np.asarray(outs[0]), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(outs[1]), [0.0, 2.0, 4.0])
    bufs = dispatch.execute(exe, [x._buf])
    assert not any(isinstance(b, Array) for b in bufs)
    np.testing.assert_array_equal(np.asarray(bufs[1]), [0.0, 2.0, 4.0])


def test_direct_call_first_then_execute():
    exe, x = _program()
    calls = []

    class Results:
        def consume_with_handlers(self, handlers):
            calls.append(handlers)
            return exe.execute([x._buf])

    outs = dispatch.execute(exe, [x._buf], [x.aval] * 2, (), lambda bufs: Results(), "h")
    assert calls == ["h"] and len(outs) == 2

    def failing(bufs):
        raise RuntimeError("direct call refused")
    outs = dispatch.execute(exe, [x._buf], [x.aval] * 2, (), failing, "h")
    np.testing.assert_array_equal(np.asarray(outs[0]), [1.0, 2.0, 3.0])


def test_deleted_arrays_explained():
    exe, _ = _program()
    x = jnp.arange(3.0)
    buf = x._buf
    x.delete()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        dispatch.execute(exe, [buf], None, [x])
    # A donated array (deleted, not by the user): jaxlib's error, unless any_deleted.
    y = jnp.arange(3.0)
    y._buf.delete()
    with pytest.raises(ValueError, match="deleted or donated"):
        dispatch.execute(exe, [y._buf], None, [y])
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        dispatch.execute(exe, [y._buf], None, [y], None, None, True)


def test_error_raised_for_the_caller():
    """A host callback's raise_in_caller error is raised as it is, not as XLA's error."""
    own = KeyError("the callback's own error 71523")
    try:
        raise_in_caller(own)
    except KeyError:
        pass

    class Failing:
        def execute(self, bufs):
            raise _jax.JaxRuntimeError(f"INTERNAL: CpuCallback error: {own}")

    with pytest.raises(KeyError) as info:
        dispatch.execute(Failing(), [])
    assert info.value is own

    class Other:
        def execute(self, bufs):
            raise _jax.JaxRuntimeError("INTERNAL: something else")

    with pytest.raises(_jax.JaxRuntimeError, match="something else"):
        dispatch.execute(Other(), [])


def test_c_fast_path_reads_the_entry_fields():
    """Beside the execute path, jit's C fast path runs a cache entry by its named fields:
    `fast` lets it take the entry, `out_avals` are the results' avals."""
    if jit_fast.C_FASTPATH is None:
        pytest.skip("the C extension was not built")
    f = mjax.jit(lambda a: a + 1.0)
    x = jnp.arange(3.0)
    f(x)
    f(x)
    entry = f._memo.entry
    assert entry.fast is True

    def mjax_file(path):
        return path.startswith(FRONTEND)
    assert python_calls(lambda: f(x), mjax_file) == []
    weak = ShapedArray((3,), np.float32, weak_type=True)
    entry.out_avals = (weak,)
    assert f(x).aval is weak            # (the C path built it from the field)
    assert python_calls(lambda: f(x), mjax_file) == []
    entry.fast = None
    assert python_calls(lambda: f(x), mjax_file)     # (the Python path took the call)


def test_c_eager_path_reads_the_entry_fields():
    """Eager ops' C path runs apply_eager's cache entries by their named fields too."""
    if eager_fast.C_EAGER is None:
        pytest.skip("the C extension was not built")
    x = jnp.arange(21.0, dtype=jnp.float32).reshape(7, 3)
    x * x
    x * x
    (key,) = [k for k in eager._CACHE if len(k) == 5 and k[3:] == (x.aval, x.aval)]
    entry = eager._CACHE[key]
    assert type(entry) is eager.EagerEntry and entry.run is not None

    def mjax_file(path):
        return path.startswith(FRONTEND)
    assert python_calls(lambda: x * x, mjax_file) == []
    weak = ShapedArray((7, 3), np.float32, weak_type=True)
    kept = entry.out_avals
    try:
        entry.out_avals = [weak]
        assert (x * x).aval is weak        # (the C path built it from the field)
    finally:
        entry.out_avals = kept
    assert (x * x).aval is kept[0]
