"""How many calls of functions JAX runs as one jitted program (`fused_when_eager`'s) were
traced so far, but for those whose ops round alike fused or not (data movement, single
ops: `ROUND_ALIKE`). An eager transformation whose trace made none may be compiled to
round as JAX's op-by-op evaluation does (mjax/ad/op_by_op.py); one that made some keeps
XLA's fusion, which those functions get in JAX too. (One counter for all threads: another
thread's call only makes the choice the conservative one.)"""

calls = 0

ROUND_ALIKE = frozenset("""
    broadcast_arrays moveaxis expand_dims squeeze concatenate concat stack flip tile repeat
    where take take_along_axis max min diagonal eye meshgrid trunc _power clip signbit
    isposinf isneginf count_nonzero nonzero heaviside sum prod all any argmax argmin cumsum
    cumprod cumulative_sum cumulative_prod multiply true_divide isinf reciprocal diff
    sin cos tan tanh exp exp2 log log1p expm1 sqrt cbrt arctan2 add subtract""".split())


def note_call(name: str) -> None:
    """Counts one traced call of the function JAX jits named `name`."""
    global calls
    if name not in ROUND_ALIKE:
        calls += 1
