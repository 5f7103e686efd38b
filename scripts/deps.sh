#!/usr/bin/env bash
# Installs the Debian packages proxima needs (only the missing ones). Usage: scripts/deps.sh [--peers]
#   --peers  also the peer libraries compared against in the benchmarks (libccd, FCL, Bullet)
set -euo pipefail
pkgs=(cmake ninja-build g++ python3 libeigen3-dev libqhull-dev libgmp-dev nlohmann-json3-dev libcli11-dev
      libgtest-dev libbenchmark-dev libyaml-cpp-dev python3-matplotlib)
if [[ "${1:-}" == "--peers" ]]; then pkgs+=(libccd-dev libfcl-dev libbullet-dev); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
