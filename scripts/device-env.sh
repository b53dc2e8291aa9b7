#!/usr/bin/env bash
# For a machine without the project's Debian packages but with a GPU driver (the lent NVIDIA
# machine): unpack the packages carried in .deps/ into /tmp/deps (never into /), register the
# NVIDIA OpenCL driver with the ICD loader, and export what CMake and the programs need.
# Source it: `source scripts/device-env.sh`.
mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
mkdir -p /tmp/deps
for deb in .deps/*.deb; do dpkg -x "$deb" /tmp/deps; done
lib=/tmp/deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH="$lib/openblas-pthread:$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export BATCHCL_CMAKE_ARGS="-DCMAKE_PREFIX_PATH=/tmp/deps/usr -DOpenCL_INCLUDE_DIR=/tmp/deps/usr/include \
 -DOpenCL_LIBRARY=/usr/lib/x86_64-linux-gnu/libOpenCL.so.1"
