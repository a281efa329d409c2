"""Array serialization: asynchronous checkpointing of arrays with TensorStore (writes
go on in a thread; `wait_until_finished` joins it, and in several processes waits at
a barrier of the distributed client before process 0 runs the commit callback).
JAX: jax.experimental.array_serialization.serialization."""
from __future__ import annotations

import abc
import asyncio
import functools
import itertools
import logging
import re
import threading
import time
from typing import Any

from mjax.arrays import distributed
from mjax.base import monitoring, tree_util
from mjax.experimental.array_serialization import tensorstore_impl as ts_impl
from mjax.experimental.array_serialization.tensorstore_impl import (  # noqa: F401
    _DEFAULT_BASE_DRIVER as _DEFAULT_DRIVER, _LimitInFlightBytes,
    _TS_CONTEXT as TS_CONTEXT, _run_deserialization as run_deserialization,
    _run_serialization as run_serialization, async_deserialize, async_serialize)
from mjax.arrays.placement import process_count, process_index

_get_metadata = functools.partial(ts_impl._get_tensorstore_metadata, driver="zarr")
get_tensorstore_spec = functools.partial(ts_impl.get_tensorstore_spec, driver="zarr",
                                         ocdbt=False)

_CHECKPOINT_SUCCESS = "checkpoint_write_success"
_module_unique_count = itertools.count()
_DISTRIBUTED_SYSTEM_MSG = ("Please initialize the distributed system via "
                           "`jax.distributed.initialize()` at the start of your program.")
_REMOTE_URL_PREFIXES = ["gs://", "s3://"]
_REMOTE_DRIVERS = ("gcs", "s3")
_BARRIER_TIMED_OUT_MSG = (
    "Suggestions for possible fixes:\n"
    "* Check the logs to see if one or more processes failed.\n"
    "* Make sure the training and checkpointing endpoints are close geographically.\n"
    "* Try increasing the timeout you pass to GlobalAsyncCheckpointManager.")
logger = logging.getLogger(__name__)


class BarrierTimeoutError(Exception):
    pass


def is_remote_storage(tspec: dict[str, Any] | str) -> bool:
    """Whether a spec (or a kvstore URL) points at cloud storage (gs://, s3://)."""
    if isinstance(tspec, str):
        return re.match(rf'^({"|".join(_REMOTE_URL_PREFIXES)})', tspec) is not None
    for key in ("base", "kvstore"):
        if key in tspec:
            return is_remote_storage(tspec[key])
    return tspec.get("driver") in _REMOTE_DRIVERS


def _get_key(key: int) -> str:
    return f"tensorstore_checkpoint_{key}"


def _client():
    return distributed._STATE.get("client")


class GlobalAsyncCheckpointManagerBase(abc.ABC):
    """The interface of a manager of asynchronous array checkpoints: `serialize` starts
    one (waiting for the previous one first), `check_for_errors` raises what the
    background commit raised, `wait_until_finished` blocks until it is done."""

    @abc.abstractmethod
    def check_for_errors(self):
        """Raises an error of the background commit (non-blocking)."""

    @abc.abstractmethod
    def wait_until_finished(self):
        """Blocks until serialization has finished."""

    @abc.abstractmethod
    def serialize(self, arrays, tensorstore_specs, *, on_commit_callback):
        """Serializes arrays to TensorStore."""

    @abc.abstractmethod
    def deserialize(self, shardings, tensorstore_specs, global_shapes=None, dtypes=None):
        """Deserializes arrays from TensorStore."""


class AsyncManager:
    """Runs the commit of a serialization in a thread (see GlobalAsyncCheckpointManager)."""

    def __init__(self, timeout_secs=300):
        self._timeout_secs = timeout_secs
        self._timeout_in_ms = timeout_secs * 1000
        self._commit_futures = None
        self._thread = None
        self._exception = None
        if process_count() > 1 and _client() is None:
            raise ValueError(_DISTRIBUTED_SYSTEM_MSG)
        self._client = _client()
        self._count: int | None = None
        self._on_commit_callback = None

    def __del__(self):
        if self._thread is not None and self._thread.is_alive():
            logger.warning("Please add `.wait_until_finished()` in the main thread before "
                           "your program finishes because there is a possibility of losing "
                           "errors raised if the this class is deleted before writing is "
                           "completed.")

    def _thread_func(self):
        try:
            me, n = process_index(), process_count()
            start = time.time()
            for future in self._commit_futures:
                future.result()
            key = None
            if n > 1:
                key = _get_key(self._count)
                self._client.wait_at_barrier(key, self._timeout_in_ms)
            if me == 0:
                if self._on_commit_callback is not None:
                    self._on_commit_callback()
                if n > 1:
                    self._client.key_value_set(key, _CHECKPOINT_SUCCESS)
            monitoring.record_event_duration_secs(
                "/jax/checkpoint/write/async/thread_duration_sec", time.time() - start)
        except Exception as e:  # (raised by check_for_errors in the main thread)
            self._exception = e

    def _start_async_commit(self, on_commit_callback):
        self._count = next(_module_unique_count)
        self._on_commit_callback = on_commit_callback
        self._thread = threading.Thread(target=self._thread_func)
        self._thread.start()

    def check_for_errors(self):
        if self._exception is None:
            return
        exception, self._exception = self._exception, None
        if "DEADLINE_EXCEEDED: Barrier timed out" in str(exception):
            raise BarrierTimeoutError("\n".join([str(exception), _BARRIER_TIMED_OUT_MSG]))
        raise exception

    def wait_until_finished(self):
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.check_for_errors()
        if process_count() > 1 and self._count is not None:
            self._client.blocking_key_value_get(_get_key(self._count), self._timeout_in_ms)

    def _add_futures(self, futures):
        self._commit_futures = futures


class GlobalAsyncCheckpointManager(AsyncManager, GlobalAsyncCheckpointManagerBase):
    """Serializes arrays through TensorStore asynchronously: `serialize` returns once
    the arrays are copied out (they may then change), the writes commit in a thread."""

    def serialize(self, arrays, tensorstore_specs, *, on_commit_callback=None,
                  transaction=None):
        """Starts writing `arrays` to `tensorstore_specs`; `on_commit_callback` runs (in
        process 0) once every process's writes are committed."""
        self.wait_until_finished()
        commit_futures: list = []

        async def run():
            writes = tree_util.tree_map(
                lambda a, spec: ts_impl.async_serialize(
                    a, spec, commit_future=commit_futures, transaction=transaction),
                arrays, tensorstore_specs)
            return await asyncio.gather(*writes)
        asyncio.run(run())
        self._add_futures(commit_futures)
        self._start_async_commit(on_commit_callback)

    def serialize_with_paths(self, arrays, paths, *, on_commit_callback=None,
                             transaction=None):
        specs = tree_util.tree_map(get_tensorstore_spec, paths)
        return self.serialize(arrays, specs, on_commit_callback=on_commit_callback,
                              transaction=transaction)

    def deserialize(self, shardings, tensorstore_specs, global_shapes=None, dtypes=None,
                    concurrent_gb: int = 32):
        self.wait_until_finished()
        return ts_impl._run_deserialization(shardings, tensorstore_specs, global_shapes,
                                            dtypes, concurrent_gb)

    def deserialize_with_paths(self, shardings, paths, global_shapes=None, dtypes=None,
                               concurrent_gb: int = 32):
        specs = tree_util.tree_map(get_tensorstore_spec, paths)
        return self.deserialize(shardings, specs, global_shapes, dtypes, concurrent_gb)
