#!/usr/bin/env bash
# Install dependencies, build, and run the whole test suite twice: a warning-free release build,
# then AddressSanitizer + UndefinedBehaviorSanitizer with a cold batchcl cache (so that every
# kernel goes through clBuildProgram under the sanitizers; on PoCL, batchcl keeps no program
# binaries by default, and test_program switches them on to run the cache's write and read paths).
# PoCL's own compile cache is the one the release pass filled: the sanitizer pass
# builds the same sources with the same options, and compiling them again (10-30 s each on 2
# cores, about 20 minutes in all) exercised PoCL's LLVM rather than this library. Tests run on
# BATCHCL_TEST_DEVICE, else the default device (the first GPU, else the CPU through PoCL). The
# sanitizer pass sets BATCHCL_TEST_QUICK: the same tests on smaller size grids (the release pass has
# already run the full grids).
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
rm -rf build-asan/kernel-cache
(cd build-asan && BATCHCL_TEST_QUICK=1 ctest -j "$jobs" --output-on-failure)
echo "run-tests: all tests passed (release and sanitizer builds)"
