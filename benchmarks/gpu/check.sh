#!/bin/bash
# On a GPU machine: installs the wheelhouse made by build_wheelhouse.sh into a scratch
# directory (the interpreter's own NumPy, pluggy, tqdm, filelock, pytest, CuPy and PyTorch are
# used), then runs the cuda-marked tests and the GPU benchmark from the repository root.
#
#   benchmarks/gpu/check.sh WHEELHOUSE REPORTS [all|tests|bench]
#
# REPORTS receives env.txt, cuda_tests.log, gpu_run.md and gpu_run.err. TEST_LIMIT and
# BENCH_LIMIT (seconds) bound the two runs; PYTEST_ARGS is passed to pytest (``-n 8`` with
# pytest-xdist) and BENCH_ARGS to gpu_run.py.
set -o pipefail
WHEELS=${1:?usage: check.sh WHEELHOUSE REPORTS [all|tests|bench]}
REPORTS=${2:?usage: check.sh WHEELHOUSE REPORTS [all|tests|bench]}
MODE=${3:-all}
mkdir -p "$REPORTS"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/opweave-site "$WHEELS"/*.whl || exit 1
export PYTHONPATH=/tmp/opweave-site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$REPORTS/env.txt"
python3 -c "import sys, numpy, pycuda.driver as d; d.init(); print(sys.version); \
print('numpy', numpy.__version__); \
print(d.Device(0).name(), 'CUDA', d.get_version(), 'driver', d.get_driver_version())" \
    2>&1 | tee -a "$REPORTS/env.txt"
python3 -m opweave.cli info 2>&1 | tee -a "$REPORTS/env.txt" | tail -15
if [ "$MODE" != bench ]; then
    # shellcheck disable=SC2086
    timeout "${TEST_LIMIT:-600}" python3 -m pytest tests -m cuda -p no:cacheprovider -q -rfEs \
        --timeout 120 $PYTEST_ARGS 2>&1 | tee "$REPORTS/cuda_tests.log" | tail -60
fi
if [ "$MODE" != tests ]; then
    # shellcheck disable=SC2086
    timeout "${BENCH_LIMIT:-600}" python3 benchmarks/gpu_run.py $BENCH_ARGS \
        >"$REPORTS/gpu_run.md" 2>"$REPORTS/gpu_run.err"
    echo "gpu_run rc=$?"
    cat "$REPORTS/gpu_run.md"
    tail -20 "$REPORTS/gpu_run.err"
fi
