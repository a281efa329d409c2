"""One process of test_distributed.py: joins a 2-process run, runs one sharded jit step
over both processes' devices, and prints its shards as JSON. With a third argument
`victim=<k>`, process k kills itself after that step and the other keeps running steps
(until the runtime ends it: test_distributed checks how and how soon)."""
import json
import os
import signal
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"

import numpy as np  # noqa: E402

import mjax  # noqa: E402
import mjax.numpy as jnp  # noqa: E402
from mjax.sharding import Mesh, NamedSharding, P  # noqa: E402


HEARTBEAT_TIMEOUT = 10  # seconds; test_distributed reads it


def main(process_id: int, port: str, victim: int | None = None):
    mjax.distributed.initialize(f"127.0.0.1:{port}", num_processes=2,
                                process_id=process_id, initialization_timeout=60,
                                heartbeat_timeout_seconds=HEARTBEAT_TIMEOUT)
    mesh = Mesh(np.array(mjax.devices()), ("x",))
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    w = np.linspace(-1, 1, 4 * 3, dtype=np.float32).reshape(4, 3)
    xs = mjax.device_put(x, NamedSharding(mesh, P("x")))

    @mjax.jit
    def step(v, m):
        y = jnp.tanh(v @ m)
        return y, jnp.sum(y, axis=0)  # the sum crosses both processes

    y, total = step(xs, w)
    out = {"process_index": mjax.process_index(), "process_count": mjax.process_count(),
           "devices": mjax.device_count(), "local_devices": mjax.local_device_count(),
           "y": [[s.index[0].start, s.index[0].stop, np.asarray(s.data).tolist()]
                 for s in y.addressable_shards],
           "total": np.asarray(total.addressable_shards[0].data).tolist()}
    print("RESULT " + json.dumps(out), flush=True)
    if victim is None:
        mjax.distributed.shutdown()
        return
    if process_id == victim:
        print("DYING", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    while True:  # each step needs the dead process's devices: it can never finish
        step(xs, w)[1].block_until_ready()


if __name__ == "__main__":
    victim = next((int(a.split("=")[1]) for a in sys.argv[3:] if a.startswith("victim=")),
                  None)
    main(int(sys.argv[1]), sys.argv[2], victim)
