#!/usr/bin/env bash
# Creates .venv/ at the repository root on first use and (re)installs a requirements file whenever
# its content changed since the last install. Sourced-free: prints nothing when all is current.
# Usage: packaging/ensure_venv.sh REQUIREMENTS_FILE
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
req="$root/$1"
venv="$root/.venv"
python="${PYTHON:-}"
if [ -z "$python" ]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then python="$candidate"; break; fi
  done
fi
if [ ! -x "$venv/bin/python" ]; then
  echo "Creating $venv with $python ..." >&2
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip >&2
fi
# A stamp per requirements file holds the digest of what was installed; requirements-dev.txt
# includes requirements.txt (-r), so its digest covers both and installing it stamps both.
digest_of() { cat "$root/requirements.txt" "$1" | sha256sum | cut -d' ' -f1; }
stamp_of() { echo "$venv/.installed-$(basename "$1").sha256"; }
if [ ! -f "$(stamp_of "$req")" ] || [ "$(cat "$(stamp_of "$req")")" != "$(digest_of "$req")" ]; then
  echo "Installing $(basename "$req") into $venv (first run takes a minute) ..." >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" >&2
  digest_of "$req" > "$(stamp_of "$req")"
  digest_of "$root/requirements.txt" > "$(stamp_of "$root/requirements.txt")"
fi
