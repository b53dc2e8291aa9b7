#!/usr/bin/env bash
# Install the build tree into a scratch prefix, then build and run a consumer through CMake's
# find_package and through pkg-config. Usage: run.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > /dev/null
for f in include/batchcl.h share/batchcl/cl/ldlt.cl share/batchcl/cl/common.cl; do
  test -f "$work/prefix/$f" || { echo "not installed: $f"; exit 1; }
done
libdir=$(ls -d "$work/prefix"/lib*/ | head -1)
test -f "$libdir/cmake/batchcl/batchclConfig.cmake" && test -f "$libdir/pkgconfig/batchcl.pc"
ls "$libdir"/libbatchcl.so.0 "$libdir"/libbatchcl.a > /dev/null
# CMake package; the kernels come from the installed tree, found beside the library
cmake -S "$src/tests/install" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/cmake" > /dev/null
BATCHCL_CACHE_DIR=off "$work/cmake/consumer"
# pkg-config
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -o "$work/pc-consumer" "$src/tests/install/consumer.c" $(pkg-config --cflags --libs batchcl) -lm \
   -Wl,-rpath,"$libdir"
BATCHCL_CACHE_DIR=off "$work/pc-consumer"
# the PDE pricer (when the hosts were built) finds its kernel in the installed tree
if [ -x "$work/prefix/bin/pde_pricer" ]; then
  test -f "$work/prefix/share/batchcl/hosts/pde_pricer.cl" && test -f "$work/prefix/share/batchcl/hosts/pde_layout.h"
  LD_LIBRARY_PATH="$libdir" BATCHCL_CACHE_DIR=off "$work/prefix/bin/pde_pricer" --generate 3 --m 32 --steps 16 \
    --out "$work/prices.csv"
  test "$(wc -l < "$work/prices.csv")" -eq 4
fi
echo "install: header, libraries, kernels, CMake package and pkg-config file work"
