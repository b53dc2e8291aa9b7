#!/usr/bin/env bash
# Install dependencies, build, and run the main job: a large batch of SPD systems solved by
# LDL^T on the default device (BATCHCL_DEVICE, else the first GPU, else the CPU), every solution
# verified against its matrix, timed, and compared with LAPACK on the host. Extra arguments go to
# `batchcl solve` (e.g. --n 64 --precision d).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"
./build/batchcl info
./build/batchcl solve "$@"
