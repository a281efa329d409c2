"""What a DMA semaphore counts in interpret mode, as JAX 0.10.2's two interpreters count:

- interpret=True (JAX's generic interpreter, pallas/mosaic/primitives.py's discharge
  rules): a DMA adds its element count (at most 32767: the semaphore is an int16) and a
  wait subtracts the element count of the view it names; sums wrap as int16s do (a
  REGULAR semaphore's too). `semaphore_read` works there,
  so the counts read after starts and waits are compared with JAX's and NumPy's.
- pltpu.InterpretParams() (JAX's TPU interpreter): a DMA signals the bytes it reads and
  a wait waits for the byte count of its descriptor's source. That interpreter has no
  `semaphore_read`, so mjax's counts are checked against NumPy's byte counts, and the
  same kernel without the reads against JAX's values and its report of semaphores left
  non-zero at kernel exit (on a shard_map's devices: one wait covering several remote
  DMAs leaves nothing behind, on the destination's recv semaphore and the source's send
  semaphore alike).
"""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import pallas as jpl
from jax.experimental.pallas import tpu as jpltpu

import mjax
import mjax.numpy as jnp
from mjax.experimental import pallas as pl
from mjax.experimental.pallas import tpu as pltpu

MJAX = (mjax, jnp, pl, pltpu)
JAX = (jax, jjnp, jpl, jpltpu)


def _counts(libs, x, y, params, read=True):
    """Three DMAs on one semaphore (two halves of x, then y of another dtype), the
    semaphore read after each start; one wait for the first half, one wait on a
    descriptor of all of x (covering both halves), one for y; read after each."""
    jax_, jnp_, pl_, pltpu_ = libs
    h = x.shape[0] // 2

    def kernel(x_ref, y_ref, o_ref, s_ref, buf, ybuf, sem):
        def note(i):
            if read:
                s_ref[i] = pl_.semaphore_read(sem)
        c1 = pltpu_.make_async_copy(x_ref.at[0:h], buf.at[0:h], sem)
        c2 = pltpu_.make_async_copy(x_ref.at[h:2 * h], buf.at[h:2 * h], sem)
        c3 = pltpu_.make_async_copy(y_ref, ybuf, sem)
        for i in range(6):
            s_ref[i] = -1
        c1.start()
        note(0)
        c2.start()
        note(1)
        c3.start()
        note(2)
        # (a wait on a descriptor of a half: the part of the sum it takes)
        pltpu_.make_async_copy(x_ref.at[0:h], buf.at[0:h], sem).wait()
        note(3)
        c3.wait()
        note(4)
        c1.start()
        # (one wait covering two DMAs: a descriptor of all of x after two halves)
        pltpu_.make_async_copy(x_ref, buf, sem).wait()
        note(5)
        o_ref[...] = buf[...] + ybuf[0:1, 0:x.shape[1]].astype(o_ref.dtype)

    return pl_.pallas_call(
        kernel,
        in_specs=[pl_.BlockSpec(memory_space=pl_.ANY)] * 2,
        out_specs=(pl_.BlockSpec(memory_space=pltpu_.VMEM),
                   pl_.BlockSpec(memory_space=pltpu_.SMEM)),
        out_shape=(jax_.ShapeDtypeStruct(x.shape, x.dtype),
                   jax_.ShapeDtypeStruct((6,), np.int32)),
        scratch_shapes=[pltpu_.VMEM(x.shape, x.dtype), pltpu_.VMEM(y.shape, y.dtype),
                        pltpu_.SemaphoreType.DMA],
        interpret=params)(x, y)


def _expected(x, y, unit):
    """The counts NumPy says: `unit(a)` is what a DMA of `a` counts."""
    h = x.shape[0] // 2
    half, whole, other = unit(x[:h]), unit(x), unit(y)
    return [half, 2 * half, 2 * half + other, half + other, half, half + half - whole]


def _inputs(xdtype, ydtype, xshape=(8, 128), yshape=(16, 128)):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(xshape) * 10).astype(xdtype)
    y = (rng.standard_normal(yshape) * 10).astype(ydtype)
    return x, y


DTYPES = [(np.float32, np.int8), (np.int16, np.float32), (jjnp.bfloat16, np.int32)]


@pytest.mark.parametrize("xdtype,ydtype", DTYPES)
def test_generic_interpreter_counts_elements(xdtype, ydtype):
    x, y = _inputs(xdtype, ydtype)
    got_o, got_s = _counts(MJAX, x, y, True)
    want_o, want_s = _counts(JAX, x, y, True)
    np.testing.assert_array_equal(np.asarray(got_s), np.asarray(want_s))
    np.testing.assert_array_equal(np.asarray(got_s), _expected(x, y, lambda a: a.size))
    np.testing.assert_array_equal(np.asarray(got_o, np.float32),
                                  np.asarray(want_o, np.float32))


def _wrapped(deltas, reads):
    """The int16 counts after each of `deltas` (NumPy's int16 wraps), at `reads`."""
    counts, c = [], np.int16(0)
    with np.errstate(over="ignore"):
        for d in deltas:
            c = np.int16(c + np.int16(d))
            counts.append(int(c))
    return [counts[i] for i in reads]


def test_generic_interpreter_caps_a_dma_at_int16_max_and_wraps_the_sum():
    # (halves of 32 * 1024 elements: JAX's int16 semaphore takes at most 32767 a DMA,
    # and two of them sum past 32767: the int16 wraps)
    x, y = _inputs(np.float32, np.int8, xshape=(512, 128), yshape=(8, 128))
    got_s = np.asarray(_counts(MJAX, x, y, True)[1])
    want_s = np.asarray(_counts(JAX, x, y, True)[1])
    np.testing.assert_array_equal(got_s, want_s)
    cap = np.iinfo(np.int16).max
    half, other = min(x[:256].size, cap), y.size
    expected = _wrapped([half, half, other, -half, -other, half, -min(x.size, cap)],
                        [0, 1, 2, 3, 4, 6])
    np.testing.assert_array_equal(got_s, expected)
    assert got_s[1] < 0


def _regular(libs):
    """Two signals of 30000 and two waits on a REGULAR semaphore, read after each."""
    jax_, _, pl_, pltpu_ = libs

    def kernel(o_ref, sem):
        for i, (op, n) in enumerate([(pl_.semaphore_signal, 30000)] * 2 +
                                    [(pl_.semaphore_wait, 30000)] * 2):
            op(sem, n)
            o_ref[i] = pl_.semaphore_read(sem)
    return jax_.jit(pl_.pallas_call(
        kernel, out_specs=pl_.BlockSpec(memory_space=pltpu_.SMEM),
        out_shape=jax_.ShapeDtypeStruct((4,), np.int32),
        scratch_shapes=[pltpu_.SemaphoreType.REGULAR], interpret=True))()


def test_generic_interpreter_wraps_a_regular_semaphore():
    got, want = np.asarray(_regular(MJAX)), np.asarray(_regular(JAX))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, _wrapped([30000, 30000, -30000, -30000],
                                                range(4)))


@pytest.mark.parametrize("xdtype,ydtype", DTYPES)
def test_tpu_interpreter_counts_bytes(xdtype, ydtype, capfd):
    x, y = _inputs(xdtype, ydtype)
    got_o, got_s = _counts(MJAX, x, y, pltpu.InterpretParams())
    np.testing.assert_array_equal(np.asarray(got_s), _expected(x, y, lambda a: a.nbytes))
    # (JAX's TPU interpreter has no semaphore_read: the kernel without the reads)
    want_o, _ = _counts(JAX, x, y, jpltpu.InterpretParams(), read=False)
    np.testing.assert_array_equal(np.asarray(got_o, np.float32),
                                  np.asarray(want_o, np.float32))
    assert "non-zero" not in capfd.readouterr().out


def _remote(libs, n, read, generic=False, rows=8):
    """On each of n devices: two DMAs of the halves of x to the right neighbour's buffer
    (recv semaphore there, send semaphore here), their counts read, then one wait on a
    descriptor of the whole buffer (send and recv), the counts read again."""
    jax_, jnp_, pl_, pltpu_ = libs

    def kernel(x_ref, o_ref, s_ref, buf, send, recv):
        me = jax_.lax.axis_index("x")
        right = jax_.lax.rem(me + 1, n)
        # (JAX's generic interpreter takes a remote device id as a scalar only)
        dev = right if generic else (right,)
        rows = x_ref.shape[0] // 2
        for i in range(4):
            s_ref[0, i] = -1
        for k in range(2):
            pltpu_.make_async_remote_copy(
                src_ref=x_ref.at[k * rows:(k + 1) * rows],
                dst_ref=buf.at[k * rows:(k + 1) * rows], send_sem=send, recv_sem=recv,
                device_id=dev, device_id_type=pl_.DeviceIdType.MESH).start()
        if read:
            s_ref[0, 0] = pl_.semaphore_read(send)
            s_ref[0, 1] = pl_.semaphore_read(recv)
        pltpu_.make_async_remote_copy(
            src_ref=x_ref, dst_ref=buf, send_sem=send, recv_sem=recv, device_id=dev,
            device_id_type=pl_.DeviceIdType.MESH).wait()
        if read:
            s_ref[0, 2] = pl_.semaphore_read(send)
            s_ref[0, 3] = pl_.semaphore_read(recv)
        o_ref[...] = buf[...]

    call = pl_.pallas_call(
        kernel,
        in_specs=[pl_.BlockSpec(memory_space=pltpu_.VMEM)],
        out_specs=(pl_.BlockSpec(memory_space=pltpu_.VMEM),
                   pl_.BlockSpec(memory_space=pltpu_.SMEM)),
        out_shape=(jax_.ShapeDtypeStruct((rows, 128), np.float32),
                   jax_.ShapeDtypeStruct((1, 4), np.int32)),
        scratch_shapes=[pltpu_.VMEM((rows, 128), np.float32), pltpu_.SemaphoreType.DMA,
                        pltpu_.SemaphoreType.DMA],
        interpret=True if generic else pltpu_.InterpretParams())
    P = jax_.sharding.PartitionSpec
    mesh = jax_.make_mesh((n,), ("x",), devices=jax_.devices()[:n])
    f = jax_.shard_map(call, mesh=mesh, in_specs=P("x"), out_specs=(P("x"), P("x")),
                       check_vma=False)
    return lambda x: jax_.jit(f)(jax_.device_put(x, jax_.sharding.NamedSharding(mesh,
                                                                                P("x"))))


def test_remote_dmas_count_bytes_on_both_devices(capfd):
    n = 4
    x = np.arange(n * 8 * 128, dtype=np.float32).reshape(n * 8, 128)
    got_o, got_s = _remote(MJAX, n, True)(x)
    want_o, _ = _remote(JAX, n, False)(x)
    np.testing.assert_array_equal(np.asarray(got_o), np.asarray(want_o))
    np.testing.assert_array_equal(np.asarray(got_o),
                                  np.roll(x.reshape(n, 8, 128), 1, axis=0).reshape(x.shape))
    half = x[:4].nbytes
    np.testing.assert_array_equal(np.asarray(got_s), [[2 * half, 2 * half, 0, 0]] * n)
    assert "non-zero" not in capfd.readouterr().out


def test_remote_dmas_count_elements_with_the_generic_interpreter():
    n = 4
    x = np.arange(n * 8 * 128, dtype=np.float32).reshape(n * 8, 128)
    got_o, got_s = _remote(MJAX, n, True, generic=True)(x)
    want_o, want_s = _remote(JAX, n, True, generic=True)(x)
    np.testing.assert_array_equal(np.asarray(got_o), np.asarray(want_o))
    np.testing.assert_array_equal(np.asarray(got_s), np.asarray(want_s))
    np.testing.assert_array_equal(np.asarray(got_s), [[2 * 512, 2 * 512, 0, 0]] * n)


def test_remote_dma_counts_wrap_with_the_generic_interpreter():
    # (two remote DMAs of 132 * 128 elements each: their sum on the send and receive
    # semaphores passes 32767 and wraps, as JAX's int16 semaphores do)
    n, rows = 2, 264
    x = np.arange(n * rows * 128, dtype=np.float32).reshape(n * rows, 128)
    got_o, got_s = _remote(MJAX, n, True, generic=True, rows=rows)(x)
    want_o, want_s = _remote(JAX, n, True, generic=True, rows=rows)(x)
    np.testing.assert_array_equal(np.asarray(got_o), np.asarray(want_o))
    np.testing.assert_array_equal(np.asarray(got_s), np.asarray(want_s))
    half = rows // 2 * 128
    two = _wrapped([half, half], [1])[0]
    assert two < 0
    np.testing.assert_array_equal(np.asarray(got_s)[:, :2], [[two, two]] * n)
