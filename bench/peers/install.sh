#!/usr/bin/env bash
# Installs the peer DEM codes of the whole-simulation benchmark from Debian's packages:
#   liggghts (/usr/bin/liggghts), lammps (/usr/bin/lmp, GRANULAR package), yade (/usr/bin/yade, with
#   the Polyhedra module), plus `time` (/usr/bin/time -v: peak memory). Idempotent: packages already
#   installed are skipped; apt-get update runs only if something is missing. Uses sudo when not root.
# Usage: bench/peers/install.sh [PACKAGE...]      (default: liggghts lammps yade time)
set -euo pipefail

PKGS=("$@")
[[ ${#PKGS[@]} -gt 0 ]] || PKGS=(liggghts lammps yade time)

missing=()
for p in "${PKGS[@]}"; do
  if [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "[peers/install] already installed: ${PKGS[*]}"
else
  SUDO=()
  if [[ "$(id -u)" -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "[peers/install] need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO=(sudo)
  fi
  echo "[peers/install] installing: ${missing[*]}"
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi

for p in "${PKGS[@]}"; do
  printf '[peers/install] %-9s %s\n' "$p" "$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo missing)"
done
for exe in liggghts lmp yade /usr/bin/time; do
  if command -v "$exe" >/dev/null 2>&1; then
    echo "[peers/install] found $(command -v "$exe")"
  else
    echo "[peers/install] not found: $exe" >&2
  fi
done
