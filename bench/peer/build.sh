#!/bin/bash
# bench/peer/build.sh - builds random_allocations, replay and stream_churn with RAPIDS RMM C++ as extra rows
# ("rmm::pool", "rmm::binning", "rmm::arena", "rmm::async"), from the librmm-cu13 and rapids-logger
# wheels in .whl/ (get them with: python3 -m pip download --no-deps --only-binary=:all:
# --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 -d .whl librmm-cu13
# rapids-logger). Unpacks them into .peer/ (git-ignored), compiles bench/peer/rmm_cpp_peer.cu with nvcc
# (the wheel's own CCCL first, and the CCCL settings of its CMake config), and links the benchmarks
# (as `make bench` builds them, plus -DRMM_BENCH_PEER) into build/bench/peer/. Run from the repo root.
set -eu
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
ARCH=${PEER_ARCH:--arch=sm_90}
P=.peer
O=build/bench/peer
mkdir -p "$P" "$O"
ls .whl/librmm_cu13-*.whl .whl/rapids_logger-*.whl >/dev/null 2>&1 ||
    { echo "bench/peer/build.sh: no librmm_cu13 and rapids_logger wheels in .whl/ (the download command is at the top of this file)" >&2; exit 1; }
# (python's zipfile, not unzip: the GPU image has no unzip)
for w in .whl/librmm_cu13-*.whl .whl/rapids_logger-*.whl; do "${PYTHON:-python3}" -m zipfile -e "$w" "$P"; done
cp "$P/librmm/lib64/librmm.so" "$P/rapids_logger/lib64/librapids_logger.so" "$O/"
"$CUDA_HOME/bin/nvcc" -std=c++17 -O2 $ARCH -DCUB_DISABLE_NAMESPACE_MAGIC -DCUB_IGNORE_NAMESPACE_MAGIC_ERROR \
  -DTHRUST_DISABLE_ABI_NAMESPACE -DTHRUST_IGNORE_ABI_NAMESPACE_ERROR -DCCCL_DISABLE_PDL \
  -I"$P/librmm/include/rapids" -I"$P/librmm/include" -I"$P/rapids_logger/include" \
  -c bench/peer/rmm_cpp_peer.cu -o "$O/rmm_cpp_peer.o"
for b in random_allocations replay stream_churn; do
  gcc -std=c11 -O2 -DNDEBUG -DRMM_BENCH_PEER -isystem "$CUDA_HOME/include" -Ibench/peer -c bench/$b.c -o "$O/$b.o"
  "$CUDA_HOME/bin/nvcc" $ARCH -o "$O/$b" "$O/$b.o" "$O/rmm_cpp_peer.o" -L"$O" -lrmm -lrapids_logger -Xlinker -rpath='$ORIGIN' -lpthread -lm
done
echo "built $O/random_allocations, $O/replay and $O/stream_churn with RAPIDS RMM C++ rows"
