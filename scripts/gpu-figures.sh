#!/usr/bin/env bash
# Reproduce the README's GPU figures on a machine with a GPU driver but without the project's
# Debian packages (the lent H100): build from .deps/ (scripts/device-env.sh), print the device,
# run the GPU test subset and the benchmarks. Each part writes its own log into OUT_DIR (default
# ./gpu-figures) as it goes, so a run cut short still leaves what it measured.
#   bash scripts/gpu-figures.sh [OUT_DIR] [PART...]     parts: sysv syevd geev pcyclic pde cva tests tune
# tune: batchcl-tune into tuning/db (resuming the file there), cut at TUNE_SECONDS (default 450;
# run it again to go on), extra options in TUNE_ARGS; the file, its tables and the n* plot go to
# OUT_DIR.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-figures}
shift || true
parts=${*:-"sysv syevd geev pcyclic pde cva tests tune"}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/figures.log  # every benchmark's output, in order (few files: the lent machine returns 8)
source scripts/device-env.sh
start=$(date +%s)
stamp() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$log"; }

stamp build
# shellcheck disable=SC2086
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release $BATCHCL_CMAKE_ARGS >/tmp/gpu-build.log 2>&1 &&
    cmake --build build-gpu -j "$(nproc)" >>/tmp/gpu-build.log 2>&1 || { tail -30 /tmp/gpu-build.log | tee -a "$log"; exit 1; }
grep -i "batchcl:" /tmp/gpu-build.log >>"$log"
cd build-gpu
export BATCHCL_CACHE_DIR=$PWD/kernel-cache BATCHCL_DEVICE=gpu
./batchcl info 2>&1 | grep -v extensions >>"$log"
for part in $parts; do
    stamp "$part"
    case $part in
    tests) # the library's tests on the GPU (the grids are the CI's quick ones: the full grids run on PoCL)
        BATCHCL_TEST_DEVICE=gpu BATCHCL_TEST_QUICK=1 ctest -j 4 --timeout 200 -E "install|hubbard" \
            --output-on-failure >"$out/tests.log" 2>&1
        grep -E "tests passed|Failed|\*\*\*|Total Test" "$out/tests.log" >>"$log" ;;
    tune)
        # shellcheck disable=SC2086
        timeout "${TUNE_SECONDS:-450}" ./batchcl-tune --output ../tuning/db ${TUNE_ARGS:-} >"$out/tune.log" 2>&1
        echo "batchcl-tune exit $? (124: cut at TUNE_SECONDS, run again to go on)" >>"$log"
        db=$(ls -t ../tuning/db/*.json | head -1)
        cp "$db" "$out/"
        { ./batchcl-tune --output "$db" --report; ./batchcl-tune --output "$db" --plot "$out/nstar.png"; } >>"$log" 2>&1 ;;
    sysv)
        { ./batchcl bench sysv --n 32 --batch 1048576 --method ldlt,hpcr,auto --mapping auto --reps 5
          ./batchcl bench sysv --n 64 --batch 262144 --method ldlt,hpcr,eigen,auto --mapping auto --reps 5
        } >>"$log" 2>&1 ;;
    syevd)
        ./batchcl bench syevd --n 8,16,32,64 --batch 262144 --reps 5 >>"$log" 2>&1 ;;
    cva)
        ./cva_regression --png "$out/cva_condition.png" >>"$log" 2>&1 ;;
    geev)
        if [ -x ./pole_sweep ]; then
            mkdir -p /tmp/pole_sweep
            { timeout 200 ./batchcl bench geev --n 5,10,15,20,25,30 --batch 500000 --mapping all
              timeout 60 ./pole_sweep --out /tmp/pole_sweep; } >>"$log" 2>&1
        fi ;;
    pcyclic)
        { timeout 60 ./batchcl bench gemm --reps 5
          timeout 150 ./batchcl bench pcyclic --n 32,64,128,256,512,1024 --order 10000 --reps 3
          ./hubbard_greens; } >>"$log" 2>&1 ;;
    pde)
        if [ -x ./pde_pricer ]; then
            { timeout 60 ./pde_pricer --bench --precision s; timeout 60 ./pde_pricer --bench --precision d; } >>"$log" 2>&1
        fi ;;
    esac
done
stamp done
