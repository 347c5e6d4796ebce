#!/bin/bash
# Builds, on a machine with a package index and the CUDA toolkit but no GPU or driver, every
# wheel a GPU machine without a package index needs to run opweave's GPU tests and benchmarks:
# opweave's five distributions, pycuda (built against a stub libcuda) and the wheels pycuda and
# opweave-c need beyond what the GPU machine has.
#
#   benchmarks/gpu/build_wheelhouse.sh WHEELHOUSE [PYTHON_VERSION] [PYTHON]
#
# PYTHON_VERSION is the GPU machine's (default 3.12); PYTHON, an interpreter of that version
# here (default python$PYTHON_VERSION). Needs nvcc's CUDA headers (CUDA_ROOT, default
# /usr/local/cuda) and a C++ compiler. Copy WHEELHOUSE to the GPU machine and run
# benchmarks/gpu/check.sh there.
set -euo pipefail
OUT=$(realpath -m "${1:?usage: build_wheelhouse.sh WHEELHOUSE [PYTHON_VERSION] [PYTHON]}")
PYV=${2:-3.12}
PY=${3:-python$PYV}
CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
PYCUDA=${PYCUDA_VERSION:-2026.1}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"

echo "== opweave's wheels"
for dist in core backend-python backend-c backend-cuda plugins/opweave-double; do
    "$PY" -m pip wheel -q --no-deps -w "$OUT" "$REPO/$dist"
done

echo "== wheels pycuda and opweave-c need (for CPython $PYV, manylinux x86_64)"
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$PYV" \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$OUT" pytools platformdirs mako siphash24 cffi pycparser

echo "== pycuda $PYCUDA, built against a stub libcuda"
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q setuptools wheel numpy
"$WORK/venv/bin/pip" download -q --no-deps --no-binary pycuda "pycuda==$PYCUDA" -d "$WORK"
tar -xzf "$WORK"/pycuda-*.tar.gz -C "$WORK"
SRC=$(echo "$WORK"/pycuda-*/)
# A first link shows which driver symbols pycuda's extension calls; the stub exports each
# of them (an empty stub would be dropped from the link, and the extension would then
# miss them at import on the GPU machine). The real libcuda.so.1 replaces it at run time.
mkdir -p "$WORK/stub"
echo "" >"$WORK/stub/empty.c"
gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$WORK/stub/libcuda.so" "$WORK/stub/empty.c"
(cd "$SRC" && "$WORK/venv/bin/python" configure.py --cuda-root="$CUDA_ROOT" \
    --cudadrv-lib-dir="$WORK/stub" --no-cuda-enable-curand >/dev/null &&
    "$WORK/venv/bin/pip" wheel -q --no-build-isolation --no-deps -w "$WORK/first" .)
nm -D --undefined-only "$SRC"/build/lib.*/pycuda/_driver*.so | awk '{print $2}' |
    sed 's/@.*//' | grep -E '^cu' | sort -u |
    sed 's/.*/void &(void) {}/' >"$WORK/stub/symbols.c"
gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$WORK/stub/libcuda.so" "$WORK/stub/symbols.c"
rm -f "$SRC"/build/lib.*/pycuda/_driver*.so
(cd "$SRC" && "$WORK/venv/bin/pip" wheel -q --no-build-isolation --no-deps -w "$OUT" .)
echo "wheelhouse: $OUT"
ls "$OUT"
