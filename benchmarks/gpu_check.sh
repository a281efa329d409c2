#!/usr/bin/env bash
# Runs benchmarks/gpu_check.py (an MLP on the GPU vs NumPy and JAX), then
# benchmarks/pallas_gpu_check.py (Pallas kernels lowered to Triton: a blocked matmul and a
# fused softmax vs NumPy and JAX's Pallas), on a machine whose Python already has jaxlib,
# jax and a jax-cuda PJRT plugin (mjax is laid out on PYTHONPATH from this checkout, no
# install).
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=$(mktemp -d)/mjax
cp -r frontend "$pkg"
cp -r dialect "$pkg/dialect"; cp -r passes "$pkg/passes"; cp -r runtime "$pkg/runtime"
export PYTHONPATH="$(dirname "$pkg")${PYTHONPATH:+:$PYTHONPATH}"
python3 -c "import jaxlib; print('jaxlib', jaxlib.__version__)"
MJAX_PLATFORM=cuda python3 benchmarks/gpu_check.py
MJAX_PLATFORM=cuda python3 benchmarks/pallas_gpu_check.py
