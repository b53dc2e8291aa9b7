#!/usr/bin/env bash
# Install dependencies, build, and run the whole test suite twice: a warning-free release build,
# then AddressSanitizer + UndefinedBehaviorSanitizer with cold kernel caches (so PoCL's JIT and the
# binary cache run under the sanitizers too). Tests run on BATCHCL_TEST_DEVICE, else the default
# device (the first GPU, else the CPU through PoCL). The sanitizer pass sets BATCHCL_TEST_QUICK: the
# same tests on smaller size grids (the release pass has already run the full grids).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc)

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBATCHCL_WERROR=ON
cmake --build build -j "$jobs"
(cd build && ctest -j "$jobs" --output-on-failure)

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBATCHCL_SANITIZE=ON -DBATCHCL_WERROR=ON \
      -DBATCHCL_BUILD_HOSTS=OFF
cmake --build build-asan -j "$jobs"
rm -rf build-asan/kernel-cache build-asan/pocl-cache
(cd build-asan && BATCHCL_TEST_QUICK=1 POCL_CACHE_DIR="$PWD/pocl-cache" ctest -j "$jobs" --output-on-failure)
echo "run-tests: all tests passed (release and sanitizer builds)"
