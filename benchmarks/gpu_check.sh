#!/usr/bin/env bash
# The GPU checks, on a machine whose Python already has jaxlib, jax and a jax-cuda PJRT
# plugin (mjax is laid out on PYTHONPATH from this checkout, no install; its C fast paths
# are built for that Python when a C compiler is there). Every stage runs even when an
# earlier one fails; the exit status counts the failed stages. (A dry run on a CPU:
# GPU_CHECK_PLATFORM=cpu PALLAS_CHECK_INTERPRET=1 bash benchmarks/gpu_check.sh)
#   1. gpu_ops_check.py: every kind of op on the GPU against mjax on the CPU;
#   2. gpu_check.py: an MLP and a transformer LM train step vs NumPy and JAX (times too);
#   3. pallas_gpu_check.py: Pallas kernels lowered to Triton (a blocked matmul, a fused
#      softmax) vs NumPy and JAX's Pallas.
set -uo pipefail
cd "$(dirname "$0")/.."
pkg=$(mktemp -d)/mjax
cp -r frontend "$pkg"
cp -r dialect "$pkg/dialect"; cp -r passes "$pkg/passes"; cp -r runtime "$pkg/runtime"
export PYTHONPATH="$(dirname "$pkg")${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
python3 -c "import sys, jaxlib; print('python', sys.version.split()[0], 'jaxlib', jaxlib.__version__)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
include=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")
suffix=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
for ext in _fastpath _eagerpath; do
  cc -O2 -shared -fPIC -I"$include" -Iruntime "runtime/$ext.c" -o "$pkg/runtime/$ext$suffix" \
    || echo "($ext not built: Python paths)"
done
failed=0
for script in gpu_ops_check.py gpu_check.py pallas_gpu_check.py; do
  echo "==== $script"
  MJAX_PLATFORM="${GPU_CHECK_PLATFORM:-cuda}" timeout "${GPU_CHECK_TIMEOUT:-300}" python3 "benchmarks/$script" \
    || { echo "==== $script FAILED"; failed=$((failed + 1)); }
done
echo "==== $failed stage(s) failed"
exit "$failed"
