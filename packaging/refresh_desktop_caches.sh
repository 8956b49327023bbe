#!/usr/bin/env bash
# Brings the caches of a data folder up to date after install.sh or uninstall.sh changed it: desktop
# entries by MIME type, the MIME database, and the icon theme. Each tool is used only where installed
# (a desktop without one reads the files directly or never needs them).
# Usage: packaging/refresh_desktop_caches.sh DATA_DIR   (DATA_DIR: e.g. ~/.local/share)
set -euo pipefail
data="$1"
if command -v update-desktop-database >/dev/null 2>&1; then
  update-desktop-database -q "$data/applications"
fi
if command -v update-mime-database >/dev/null 2>&1 && [ -d "$data/mime/packages" ]; then
  # It prints a warning (not an error) when DATA_DIR is not on the XDG search path: keep that to itself.
  update-mime-database "$data/mime" 2>/dev/null
fi
icons="$data/icons/hicolor"
if [ -d "$icons" ]; then
  # Only refresh a cache that is already there: a cache we created would hide icons that other programs
  # install later without updating it, while a missing one just means the theme folder is read directly.
  # Touching the folder tells icon loaders without a cache that it changed.
  touch "$icons"
  if [ -f "$icons/icon-theme.cache" ] && command -v gtk-update-icon-cache >/dev/null 2>&1; then
    gtk-update-icon-cache -q -t -f "$icons" || true  # a stale cache is no reason to fail the install
  fi
fi
