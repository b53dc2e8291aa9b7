#!/usr/bin/env bash
# Register, spill and shared-memory use of every kernel in a batchcl binary cache built by NVIDIA's
# OpenCL driver (its binaries are PTX): ptxas -v on each. Usage: nvidia-kernel-report.sh CACHE_DIR
set -u
dir=${1:-$HOME/.cache/batchcl}
arch=${ARCH:-sm_90}
ptxas=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
for f in "$dir"/*.bin; do
  # skip batchcl's 24-byte cache header and the PTX string's terminating NUL
  tail -c +25 "$f" | tr -d '\000' > /tmp/bcl-kernel.ptx
  echo "== $(basename "$f") $(tail -n1 "${f%.bin}.txt" 2>/dev/null)"
  "$ptxas" -arch="$arch" -v /tmp/bcl-kernel.ptx -o /dev/null 2>&1 | grep -v "Compiling entry" | sed 's/^ptxas info *: //'
done
