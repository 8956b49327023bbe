#!/usr/bin/env bash
# Installs the system libraries Qt's X11 window needs (libxcb-cursor0, libxcb-icccm4, ...) when they are
# missing and this is a Debian/Ubuntu machine where we are root; otherwise does nothing, and the app itself
# stops with one line naming the packages and the command (gui/base/system_libraries.py decides what is
# missing). Prints nothing when all is there.
# Usage: packaging/ensure_system_libraries.sh   (after packaging/ensure_venv.sh)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ "$(uname -s)" = Linux ] || exit 0
packages="$(cd "$root" && "$root/.venv/bin/python" -m checkpoint_inspector.gui.base.system_libraries)"
[ -n "$packages" ] || exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing the libraries Qt's window needs: $packages ..." >&2
  # shellcheck disable=SC2086  (one word per package)
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages) >/dev/null 2>&1 \
    || echo "note: could not install $packages; install them with: sudo apt-get install -y $packages" >&2
fi
