"""jax.numpy's argument errors: max/min where= without initial, lists where arrays are
wanted, shapes that do not broadcast, and their messages, as JAX raises them."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
import mjax
from frontend_util import check
import mjax.numpy as jnp


RNG = np.random.default_rng(2)
A = RNG.uniform(-3, 3, (3, 4)).astype(np.float32)
NANS = np.where(RNG.uniform(size=(3, 4)) < 0.3, np.nan, A).astype(np.float32)
NANS[2] = np.nan                                   # one all-NaN row
INTS = RNG.integers(0, 6, (10,)).astype(np.int32)


def test_max_min_accept_where_with_initial():
    mask = A > 0
    check(jnp.max(A, axis=1, where=mask, initial=-5.0),
          jjnp.max(A, axis=1, where=mask, initial=-5.0))
    check(jnp.min(A, where=mask, initial=9.0), jjnp.min(A, where=mask, initial=9.0))
    with pytest.raises(ValueError, match="specify 'initial'"):
        jnp.max(A, where=mask)


@pytest.mark.parametrize("name,args", [
    ("sum", ([1, 2, 3],)), ("mean", ((1.0, 2.0),)), ("max", ([1, 2],)), ("std", ([1.0],)),
    ("any", ([True],)), ("sin", ([1.0],)), ("add", (1.0, [1.0])), ("multiply", ([1], 2))])
def test_lists_are_not_arrays_as_jax(name, args):
    # (Common Gotchas: jnp.sum([1, 2, 3]) raises; only jnp.array/asarray take sequences)
    with pytest.raises(TypeError) as theirs:
        getattr(jjnp, name)(*args)
    with pytest.raises(TypeError) as mine:
        getattr(mjax.numpy, name)(*args)
    assert str(mine.value).split(" (at ")[0] == str(theirs.value)


@pytest.mark.parametrize("shapes", [((3,), (4,)), ((100,), (100, 10)), ((2, 3), (3, 2)),
                                    ((), (2, 3), (4, 3))])
def test_shapes_that_do_not_broadcast_raise_as_jax(shapes):
    # (vmapped_log_probs: jnp arithmetic of (100,) and (100, 10) is JAX's ValueError)
    def run(np_):
        operands = [np_.ones(s) for s in shapes]
        with pytest.raises(Exception) as e:
            out = operands[0]
            for o in operands[1:]:
                out = np_.multiply(out, o) if len(shapes) == 2 else out + o
        return type(e.value)
    assert run(jnp) == run(jjnp)


def test_shape_mismatch_message_as_jax():
    with pytest.raises(ValueError) as e:
        jnp.ones(100) * jnp.ones((100, 10))
    assert str(e.value).startswith("Incompatible shapes for broadcasting: shapes=[(100,), "
                                   "(100, 10)]")


@pytest.mark.parametrize("call", [
    lambda np_: np_.broadcast_shapes((2,), (3,), (1,)),
    lambda np_: (mjax.lax if np_ is jnp else jax.lax).broadcast_shapes((1, 2, 1, 3), (2, 1, 4, 4)),
    lambda np_: np_.broadcast_arrays(np_.ones(3), np_.ones(4)),
    lambda np_: np_.broadcast_to(np_.ones((2, 3)), (4, 3)),
    lambda np_: np_.broadcast_to(np_.ones(3, np_.int32), (2,)),
])
def test_broadcasting_errors_say_what_jax_says(call):
    messages = []
    for np_ in (jnp, jjnp):
        with pytest.raises(ValueError) as e:
            call(np_)
        messages.append(str(e.value).split(" (at ")[0])
    assert messages[0] == messages[1]
