"""Writing and reading arrays (with their shardings) through TensorStore: each process
writes the shards it holds (replica 0 of each slice) into a zarr/zarr3 array, and reads
back, for every device of a sharding, the slice that device holds.
JAX: jax.experimental.array_serialization.tensorstore_impl."""
from __future__ import annotations

import asyncio
import functools
import logging
import math
import os
import re
from typing import Any

import numpy as np
import tensorstore as ts

from mjax.arrays.array import Array
from mjax.specs.dtypes import canonicalize_dtype
from mjax.specs.layout import Format
from mjax.arrays.placement import device_put, process_count, process_index
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct
from mjax.specs.sharding_impls import Sharding, SingleDeviceSharding
from mjax.spmd.global_arrays import make_array_from_single_device_arrays

_TS_ARRAY_DRIVER = "zarr3"
_TS_CONTEXT = ts.Context({
    "file_io_concurrency": {"limit": 128},
    "cache_pool": {"total_bytes_limit": 10_000_000_000},
    "cache_pool#remote": {"total_bytes_limit": 10_000_000_000},
    "data_copy_concurrency": {"limit": 128},
})
_TS_CHUNK_LAYOUT = ts.ChunkLayout(chunk=ts.ChunkLayout.Grid(elements=100_000_000))
_DEFAULT_BASE_DRIVER = "file"
_PROCESS_DIR_FORMAT = "process_{}"
_FILE_SIZE_TARGET = 2 * 1024 ** 3
Future, Transaction = ts.Future, ts.Transaction
logger = logging.getLogger(__name__)


class _LimitInFlightBytes:
    """Bounds the host memory that reads/writes in flight hold at once."""

    def __init__(self, host_memory_bytes_limit: int):
        self._max_bytes = host_memory_bytes_limit
        self._available = host_memory_bytes_limit
        self._cv = asyncio.Condition(lock=asyncio.Lock())

    async def wait_for_bytes(self, requested_bytes):
        if requested_bytes > self._max_bytes:
            raise ValueError(f"Requested more bytes than we reserved space for: "
                             f"{requested_bytes} > {self._max_bytes}")
        async with self._cv:
            await self._cv.wait_for(lambda: self._available >= requested_bytes)
            self._available -= requested_bytes

    async def release_bytes(self, requested_bytes):
        async with self._cv:
            self._available += requested_bytes
            self._cv.notify_all()


def is_tensorstore_spec_leaf(leaf) -> bool:
    """A leaf of a pytree of specs: a dict with a 'driver' or a 'kvstore'."""
    return isinstance(leaf, dict) and ("driver" in leaf or "kvstore" in leaf)


def _prime_factors(x: int) -> list[int]:
    out, p = [], 2
    while p * p <= x:
        while x % p == 0:
            out.append(p)
            x //= p
        p += 1
    if x > 1:
        out.append(x)
    return out


@functools.lru_cache(maxsize=1024)
def _compute_chunk_shape(local_shape, dtype, file_size_target=_FILE_SIZE_TARGET):
    """A chunk shape dividing `local_shape` whose bytes are at most 110% of the target
    (dividing, one prime at a time, the axis with the smallest prime factor left among
    those with two or more left; none such: as it is)."""
    shape = list(local_shape)
    if not shape or math.prod(shape) == 0:
        return [max(n, 1) for n in shape]
    size = math.prod(shape) * np.dtype(dtype).itemsize
    factors = [_prime_factors(n) for n in shape]
    while size > 1.1 * file_size_target:
        candidates = [(f[0], i) for i, f in enumerate(factors) if len(f) > 1]
        if not candidates:
            break
        p, i = min(candidates)
        factors[i].pop(0)
        shape[i] //= p
        size //= p
    return shape


def _get_tensorstore_metadata(arr, is_remote: bool = False,
                              file_size_target: int = _FILE_SIZE_TARGET,
                              driver: str = _TS_ARRAY_DRIVER) -> dict[str, Any]:
    shape = tuple(arr.shape)
    sharding = getattr(arr, "sharding", None)
    local = tuple(sharding.shard_shape(shape)) if isinstance(sharding, Sharding) else shape
    return _metadata_cached(shape, np.dtype(arr.dtype), local, is_remote,
                            file_size_target, driver)


@functools.lru_cache(maxsize=1024)
def _metadata_cached(shape, dtype, local_shape, is_remote, file_size_target, driver):
    if driver == "zarr3":
        chunk = _compute_chunk_shape(local_shape, dtype, file_size_target)
        return {"codecs": [{"name": "zstd"}] if is_remote else [], "shape": shape,
                "data_type": np.dtype(dtype).name,
                "chunk_grid": {"name": "regular",
                               "configuration": {"chunk_shape": chunk}}}
    if driver == "zarr":
        return {"compressor": {"id": "zstd"}, "shape": shape,
                "chunks": np.maximum(1, np.array(local_shape, dtype=int)).tolist()}
    raise ValueError(f"Unsupported driver: {driver}")


def merge_nested_ts_specs(dict1: dict, dict2: dict | None) -> dict:
    """dict1 updated by dict2 (their 'kvstore' entries merged the same way)."""
    if dict2 is None:
        return dict1
    kvstore = dict1.get("kvstore", {}) | dict2.get("kvstore", {})
    return dict1 | dict(dict2, kvstore=kvstore)


def _divides(x, y) -> bool:
    return bool(np.all(np.array(x) % np.array(y) == 0))


def verify_tensorstore_spec(spec: dict, arr, path, ocdbt: bool,
                            check_metadata: bool = True) -> None:
    """Raises ValueError where `spec` does not fit `arr` and `path`."""
    if ocdbt and spec.get("kvstore", {}).get("driver", "") != "ocdbt":
        raise ValueError(f"Expected ocdbt driver, got spec={spec}")
    if check_metadata:
        if arr is None:
            raise ValueError("Array is required for metadata verification.")
        meta = spec["metadata"]
        zarr3 = spec.get("driver", "") == "zarr3"
        if zarr3 and meta["data_type"] != np.dtype(arr.dtype).name:
            raise ValueError(f"Provided dtype ({meta['data_type']}) doesn't match "
                             f"(arr.dtype={arr.dtype})")
        if "shape" in meta and tuple(meta["shape"]) != tuple(arr.shape):
            raise ValueError(f"Provided shape ({meta['shape']}) doesn't match "
                             f"(arr.shape={arr.shape})")
        local = arr.sharding.shard_shape(arr.shape) if isinstance(arr, Array) else arr.shape
        if zarr3:
            chunk = meta["chunk_grid"]["configuration"]["chunk_shape"]
            if not _divides(local, chunk):
                raise ValueError(f"Provided chunk shape {chunk} does not divide the local "
                                 f"shape of the array {local}")
    found = spec["kvstore"]["base"]["path"] if ocdbt else spec["kvstore"]["path"]
    if str(found) != str(path):
        raise ValueError(f"Provided path={path} does not match the spec path: "
                         f"{spec['kvstore']}")


def _spec_has_metadata(tree) -> bool:
    return isinstance(tree, dict) and ("metadata" in tree or any(
        _spec_has_metadata(v) for v in tree.values()))


def _bucket_kvstore(driver: str, prefix: str, path: str) -> dict:
    m = re.fullmatch(f"^{prefix}://([^/]*)/(.*)$", path, re.DOTALL)
    if m is None:
        raise ValueError("The ckpt_path should contain the bucket name and the file path "
                         f"inside the bucket. Got: {path}")
    return {"driver": driver, "bucket": m.group(1), "path": m.group(2)}


def get_tensorstore_spec(ckpt_path, ocdbt: bool = True, process_idx: int | None = None,
                         arr=None, driver: str = _TS_ARRAY_DRIVER) -> dict[str, Any]:
    """The TensorStore spec of an array stored at `ckpt_path` (a local path, gs:// or
    s3://): in an OCDBT database in its parent directory (key: its name) by default,
    under process_<i>/ for `process_idx`; with `arr`, the metadata to create it."""
    path = re.sub(r"^(gs|s3):/", r"\1://", os.path.normpath(str(ckpt_path)))
    if process_idx is not None:
        parent, name = os.path.split(path)
        path = os.path.join(parent, _PROCESS_DIR_FORMAT.format(process_idx), name)
    remote = "gcs" if path.startswith("gs://") else "s3" if path.startswith("s3://") else None
    key = None
    if ocdbt:
        path, key = os.path.split(path)
    if remote is not None:
        base = _bucket_kvstore(remote, "gs" if remote == "gcs" else "s3", path)
    else:
        base = {"driver": _DEFAULT_BASE_DRIVER, "path": path}
    spec: dict[str, Any] = {"driver": driver}
    if ocdbt:
        if remote is None and not os.path.isabs(path):
            raise ValueError(f"Checkpoint path should be absolute. Got {path}")
        spec["kvstore"] = {"driver": "ocdbt", "base": base, "path": key}
    else:
        spec["kvstore"] = base
    if arr is not None:
        spec["metadata"] = _get_tensorstore_metadata(arr, driver=str(spec["driver"]))
    return spec


async def _transfer_shard_to_host(shard) -> np.ndarray:
    data = shard.data
    data.copy_to_host_async()
    await asyncio.sleep(0)   # (lets the other shards' transfers start)
    return np.asarray(data)


async def combine_kvstores(combined_kvstore: dict, kvstores: list[dict],
                           context=_TS_CONTEXT) -> None:
    """Copies every key of `kvstores` into `combined_kvstore` (one process only)."""
    combined, opened = await asyncio.gather(
        ts.KvStore.open(combined_kvstore, context=context),
        asyncio.gather(*(ts.KvStore.open(k, context=context) for k in kvstores)))
    tx = ts.Transaction()
    await asyncio.gather(*(k.experimental_copy_range_to(combined.with_transaction(tx))
                           for k in opened))
    await tx.commit_async()


async def async_serialize(arr_inp, tensorstore_spec, commit_future=None,
                          context=_TS_CONTEXT, chunk_layout=_TS_CHUNK_LAYOUT,
                          primary_host: int | None = None, replica_id: int = 0,
                          transaction=None):
    """Writes `arr_inp` (a jax.Array or NumPy array) into the TensorStore of
    `tensorstore_spec`: every shard of this process whose replica id is `replica_id`.
    `commit_future`: a list that receives the futures to await (else awaited here);
    `primary_host`: the process that creates the store (None: every process)."""
    if isinstance(arr_inp, Array) and process_count() > 1 and arr_inp.is_fully_addressable:
        raise ValueError("Passing fully addressable arrays to a multiprocess serialization "
                         "is not allowed, as this may lead to a race condition between "
                         "processes. Serialization have failed for the array with the "
                         f"path from kvstore: \"{tensorstore_spec['kvstore']}\".")
    if not _spec_has_metadata(tensorstore_spec):
        tensorstore_spec["metadata"] = _get_tensorstore_metadata(
            arr_inp, driver=tensorstore_spec["driver"])
    if tensorstore_spec["driver"] == "zarr" and "dtype" not in tensorstore_spec:
        tensorstore_spec["dtype"] = np.dtype(arr_inp.dtype).name
    if primary_host is None or process_index() == primary_host:
        opening = ts.open(ts.Spec(tensorstore_spec), create=True, open=True,
                          context=context, chunk_layout=chunk_layout,
                          transaction=transaction)
        if commit_future is not None:
            commit_future.append(opening)
        else:
            await opening
    t = await ts.open(ts.Spec(tensorstore_spec), open=True, assume_metadata=True,
                      context=context, chunk_layout=chunk_layout, transaction=transaction)

    async def write(shard):
        if shard.replica_id != replica_id:
            return
        data = await _transfer_shard_to_host(shard)
        written = t[shard.index].write(
            data, can_reference_source_data_indefinitely=isinstance(arr_inp, Array))
        if commit_future is not None:
            commit_future.append(written.commit)
            await written.copy
        else:
            await written.commit

    return await asyncio.gather(*(write(s) for s in _shards_of(arr_inp)))


def _shards_of(arr) -> list:
    if isinstance(arr, Array) or hasattr(arr, "addressable_shards"):
        return arr.addressable_shards
    return [_HostShard(np.asarray(arr))]


class _HostShard:
    """A NumPy array as its one shard (index: all of it)."""

    def __init__(self, value):
        self.data, self.replica_id = _HostData(value), 0
        self.index = tuple(slice(None) for _ in value.shape)


class _HostData(np.ndarray):
    def __new__(cls, value):
        return np.asarray(value).view(cls)

    def copy_to_host_async(self):
        pass


def _run_serialization(arrays, tensorstore_specs):
    """Writes each array into its spec's TensorStore, waiting for all of them."""
    async def run():
        await asyncio.gather(*(async_serialize(a, s)
                               for a, s in zip(arrays, tensorstore_specs)))
    asyncio.run(run())


def estimate_read_memory_footprint(t, domain) -> int:
    """Bytes that reading `domain` of the TensorStore `t` touches (whole chunks)."""
    nbytes = t.dtype.numpy_dtype.itemsize
    if domain is None:
        domain = t.domain
    template = t.chunk_layout.read_chunk_template
    if not all(template[i].finite for i in range(t.rank)):
        return domain.size * nbytes
    for i in range(t.rank):
        lo = domain.origin[i] - template.origin[i]
        hi = lo + domain.shape[i]
        size = template.shape[i]
        nbytes *= -(-hi // size) * size - lo // size * size
    return nbytes


def _in_type_parts(in_type, dtype):
    """(sharding, layout, dtype) of async_deserialize's `in_type`."""
    if isinstance(in_type, Format):
        return in_type.sharding, in_type.layout, dtype
    if isinstance(in_type, ShapeDtypeStruct):
        layout = getattr(getattr(in_type, "format", None), "layout", None)
        return in_type.sharding, layout, in_type.dtype if dtype is None else dtype
    if not isinstance(in_type, Sharding):
        raise TypeError("sharding passed to deserialization should be specified, concrete "
                        f"and an instance of `jax.sharding.Sharding`. Got {in_type}")
    return in_type, None, dtype


async def async_deserialize(in_type, tensorstore_spec, global_shape=None, dtype=None,
                            byte_limiter: _LimitInFlightBytes | None = None,
                            context=_TS_CONTEXT, chunk_layout=_TS_CHUNK_LAYOUT,
                            assume_metadata: bool = False):
    """Reads the array of `tensorstore_spec` with the sharding of `in_type` (a Sharding,
    a Format or a ShapeDtypeStruct): each device of this process gets its slice; where
    `global_shape` is larger than the stored array, the rest is zeros. `dtype`: the
    dtype to cast to on the host (default: the stored one)."""
    sharding, layout, dtype = _in_type_parts(in_type, dtype)
    if not isinstance(sharding, Sharding):
        raise TypeError("sharding passed to deserialization should be specified, concrete "
                        f"and an instance of `jax.sharding.Sharding`. Got {sharding}")
    t = await ts.open(tensorstore_spec, open=True, assume_metadata=assume_metadata,
                      context=context, chunk_layout=chunk_layout)
    shape = tuple(t.shape if global_shape is None else global_shape)
    stored = t.dtype.numpy_dtype
    dtype = canonicalize_dtype(stored if dtype is None else dtype)
    shard_shape = sharding.shard_shape(shape)

    async def read(index, device):
        wanted = ts.IndexTransform(input_shape=shape)[index].domain
        present = t.domain.intersect(wanted)
        nbytes = estimate_read_memory_footprint(t, present)
        if byte_limiter is not None:
            await byte_limiter.wait_for_bytes(nbytes)
        out = np.zeros(shard_shape, dtype=stored)
        await ts.array(out)[ts.d[:].translate_to[wanted.origin]][present].write(
            t[present])
        target = SingleDeviceSharding(device)
        result = device_put(out.astype(dtype), target if layout is None
                            else Format(layout, target))
        if byte_limiter is not None:
            await byte_limiter.release_bytes(nbytes)
        return result

    indices = sharding.devices_indices_map(shape)
    mine = [d for d in indices if d in sharding.addressable_devices]
    pieces = await asyncio.gather(*(read(indices[d], d) for d in mine))
    return make_array_from_single_device_arrays(shape, sharding, list(pieces),
                                                dtype=dtype)


def _run_deserialization(shardings, tensorstore_specs, global_shapes=None, dtypes=None,
                         concurrent_gb: int = 32):
    """Reads each spec's array with its sharding (and global shape and dtype, if given)."""
    n = len(tensorstore_specs)
    shapes = [None] * n if global_shapes is None else list(global_shapes)
    dts = [None] * n if dtypes is None else list(dtypes)

    async def run():
        limiter = _LimitInFlightBytes(concurrent_gb * 10 ** 9)
        return await asyncio.gather(*(
            async_deserialize(s, spec, shape, dt, byte_limiter=limiter)
            for s, spec, shape, dt in zip(shardings, tensorstore_specs, shapes, dts)))
    return asyncio.run(run())

