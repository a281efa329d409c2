"""JAX's Training Cookbook (docs/the-training-cookbook.rst) trains its Transformer decoder
on mjax as on jax: its companion script, unchanged (tutorials/the_training_cookbook.py),
run a few steps with a smaller model in a fresh process per library. It uses Explicit
mesh axes over 8 devices, out_sharding= on initializers, zeros and gathers, refs as jit
arguments updated in place, bfloat16 and make_array_from_process_local_data with a
PartitionSpec."""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "tutorials", "the_training_cookbook.py")

_RUN = """
import json, os, runpy, sys, time
import numpy as np
if sys.argv[1] == "mjax":
    import mjax
    mjax.alias_jax()                        # `import jax` in the script is mjax
time.sleep = lambda seconds: None           # (the script's data loader simulates I/O)
ns = runpy.run_path(sys.argv[2], run_name="cookbook")
jax = ns["jax"]
config = ns["Config"](num_train_steps=3, num_layers=2, embed_dim=128, mlp_dim=256,
                      num_heads=8, head_dim=16)
state = jax.tree.map(jax.ref.new_ref, ns["init_train_state"](config))
batches = ns["get_dataset_on_device"](config)
losses, shardings = [], set()
for _ in range(config.num_train_steps):
    losses.append(float(ns["train_step"](config, state, next(batches))["train_loss"]))
kernel = jax.ref.get(state["params"]["layers"][0]["mlp"]["in_kernel"])
json.dump({"losses": losses, "kernel_spec": str(jax.typeof(kernel)),
           "kernel": np.asarray(kernel.astype("float32")).ravel()[:64].tolist()},
          open(sys.argv[3], "w"))
"""


def _run(lib, tmp_path):
    out = tmp_path / f"{lib}.json"
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8")
    p = subprocess.run([sys.executable, "-c", _RUN, lib, SCRIPT, str(out)], env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"{lib} run failed:\n{p.stderr[-4000:]}"
    return json.load(open(out))


def test_training_cookbook_trains_as_on_jax(tmp_path):
    mine, theirs = _run("mjax", tmp_path), _run("jax", tmp_path)
    assert mine["kernel_spec"] == theirs["kernel_spec"]     # (bf16[128@fsdp,256])
    # bfloat16 training: the same losses and weights up to bfloat16's rounding.
    np.testing.assert_allclose(mine["losses"], theirs["losses"], rtol=2e-3)
    np.testing.assert_allclose(mine["kernel"], theirs["kernel"], rtol=2e-2, atol=1e-3)
