#!/usr/bin/env bash
# Install what batchcl needs from Debian packages, when missing. Idempotent.
set -euo pipefail
packages=(build-essential cmake pkg-config opencl-headers ocl-icd-opencl-dev pocl-opencl-icd
          libclblast-dev libcmocka-dev liblapacke-dev libopenblas-dev libcjson-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
