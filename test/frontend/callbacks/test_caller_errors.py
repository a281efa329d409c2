"""An error a host callback raised for its caller (mjax.arrays.caller_errors) is raised as
it was also where XLA reports it only as a result is read: on an accelerator the
callback runs beside the program, and a JaxRuntimeError carrying its text surfaces at
block_until_ready or np.asarray (on the chip, the interpreter's bounds errors did)."""
import numpy as np
import pytest
from jaxlib import _jax

from mjax.arrays.array import Array
from mjax.arrays.caller_errors import original_of, raise_in_caller
from mjax.dialect import ShapedArray


class _Refused(IndexError):
    pass


class _FailingBuffer:
    """A device buffer whose program's callback failed: reading it raises XLA's error."""
    def __init__(self, text):
        self.text = text

    def is_deleted(self):
        return False

    def block_until_ready(self):
        raise _jax.JaxRuntimeError(f"INTERNAL: Execute event error: CpuCallback error: "
                                   f"Traceback ...\n{self.text}")


def _registered(message):
    with pytest.raises(_Refused):
        raise_in_caller(_Refused(message))


@pytest.mark.parametrize("read", ["block_until_ready", "asarray"])
def test_raised_as_it_was_when_a_result_is_read(read, monkeypatch):
    # (the host copy of an accelerator's buffer raises as block_until_ready does)
    monkeypatch.setattr("mjax.arrays.array.buffer_to_numpy",
                        lambda buf, dtype: buf.block_until_ready())
    monkeypatch.setattr(Array, "is_sharded", property(lambda self: False))
    _registered("reading [5:6] of a buffer of shape (5,)")
    out = Array(_FailingBuffer("_Refused: reading [5:6] of a buffer of shape (5,)"),
                ShapedArray((5,), np.float32))
    with pytest.raises(_Refused, match=r"reading \[5:6\]"):
        out.block_until_ready() if read == "block_until_ready" else np.asarray(out)
    # (kept for the program's other results)
    assert original_of(_jax.JaxRuntimeError("... reading [5:6] of a buffer of shape (5,)"),
                       take=False) is not None


def test_other_errors_stay_xlas():
    out = Array(_FailingBuffer("RESOURCE_EXHAUSTED: out of memory"),
                ShapedArray((5,), np.float32))
    with pytest.raises(_jax.JaxRuntimeError, match="out of memory"):
        out.block_until_ready()
