"""The host callbacks that report a semaphore wait an interpreted Pallas TPU kernel on a
shard_map's devices (or a chip's cores) cannot satisfy. passes/pallas_mesh.py runs the
instances in lockstep: a wait finding too small a count there would hang, or needs an
op that another instance runs later, which lockstep cannot run first (kernels whose
waits inside a pl.when may need one run in rounds instead: passes/pallas_rounds.py,
which reports only a true deadlock). They raise in the caller, where JAX's interpreter
would wait forever. Semaphores a kernel leaves non-zero are printed,
as JAX's interpreter prints them; a device id outside the mesh raises an IndexError (in
JAX's, an IndexError inside the JaxRuntimeError)."""
from __future__ import annotations

import numpy as np

from mjax.arrays.host_callbacks import raise_in_caller, register
from mjax.passes.rules.pallas_remote import REPORT


class PallasDeadlockError(RuntimeError):
    """A semaphore wait in an interpreted kernel that no earlier op signals enough."""


class PallasLockstepError(PallasDeadlockError, NotImplementedError):
    """A wait lockstep finds short: a deadlock, or a wait that only an op another
    instance runs later satisfies, which JAX's threads run and lockstep does not (where
    the kernel's loops or called functions hold its DMAs or semaphore ops, rounds cannot
    run it either): also a NotImplementedError, naming that limit."""


def _check_wait(short, count, amount):
    if np.any(short):
        raise_in_caller(PallasLockstepError(
            f"a semaphore wait (semaphore_wait or a DMA's wait) in a Pallas kernel "
            f"interpreted on a shard_map's devices (or a chip's cores) found count "
            f"{int(np.min(count))} < {int(np.max(amount))}: mjax runs the devices' kernel "
            f"instances in lockstep (and the cores'), and no op before it on any of them "
            f"signals the semaphore enough. They would deadlock, or the signal comes from "
            f"an op another one runs later in its program than this wait, which lockstep "
            f"cannot run first"))
    return ()


def _check_stuck(stuck, pc):
    """Instances of a kernel run in rounds (passes/pallas_rounds.py) that a round left
    waiting with nothing more to run anywhere: a true deadlock."""
    if np.any(stuck):
        steps = sorted({int(p) for p, s in zip(np.ravel(pc), np.ravel(stuck)) if s})
        raise_in_caller(PallasDeadlockError(
            f"a semaphore wait (semaphore_wait or a DMA's wait) in a Pallas kernel "
            f"interpreted on a shard_map's devices (or a chip's cores) can never be "
            f"satisfied: instances still wait (before "
            f"step{'s' if len(steps) > 1 else ''} {', '.join(map(str, steps))} of the "
            f"kernel's program cut at its waits) and no instance has an op left that "
            f"signals them: the kernel deadlocks (JAX's interpreter would hang)"))
    return ()


def _named(k: int, idx: tuple) -> str:
    return f"{k}{[int(i) for i in idx]}" if idx else str(k)


def _check_exit(device, *sems):
    """JAX's interpreter's report of a semaphore left non-zero (printed, not raised)."""
    for k, sem in enumerate(sems):
        sem = np.asarray(sem)
        for idx in zip(*np.nonzero(sem)) if sem.ndim else [()] if sem != 0 else []:
            print(f"Semaphore {_named(k, idx)} (scratch semaphore {k}) has "
                  f"non-zero count for {int(device)} at kernel exit: {int(sem[idx])}")
    return ()


def _check_exit_cores(device, core, cores, *sems):
    """The report of a semaphore left non-zero by a core of a multi-core kernel (its
    cores in lockstep), naming the device and the global core as JAX's does."""
    for k, sem in enumerate(sems):
        sem = np.asarray(sem)
        for idx in zip(*np.nonzero(sem)) if sem.ndim else [()] if sem != 0 else []:
            print(f"Semaphore {_named(k, idx)} (scratch semaphore {k}) has "
                  f"non-zero count for {int(device)} (global core "
                  f"{int(device) * int(cores) + int(core)}) at kernel exit: "
                  f"{int(sem[idx])}")
    return ()


def _check_device(bad, *coords):
    if np.any(bad):
        raise_in_caller(IndexError(
            f"a remote DMA or semaphore signal in a Pallas kernel interpreted on a "
            f"shard_map's devices names the device at mesh coordinates "
            f"{tuple(int(c) for c in coords)}, outside the mesh"))
    return ()


REPORT["callback_id"] = register(_check_wait, "io_callback", key=("pallas_lockstep_wait",))
REPORT["exit_id"] = register(_check_exit, "io_callback", key=("pallas_lockstep_exit",))
REPORT["exit_cores_id"] = register(_check_exit_cores, "io_callback",
                                  key=("pallas_lockstep_exit_cores",))
REPORT["stuck_id"] = register(_check_stuck, "io_callback", key=("pallas_rounds_stuck",))
REPORT["device_id"] = register(_check_device, "io_callback", key=("pallas_lockstep_device",))

__all__ = ["PallasDeadlockError", "PallasLockstepError"]
