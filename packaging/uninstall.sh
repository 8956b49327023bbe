#!/usr/bin/env bash
# Removes what packaging/install.sh added under ${XDG_DATA_HOME:-~/.local/share}: the desktop entry,
# the MIME types and the icons, then refreshes the caches. Leaves the app itself and its settings alone.
# Usage: packaging/uninstall.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="${XDG_DATA_HOME:-$HOME/.local/share}"
app_id=checkpoint-inspector

rm -f "$data/applications/$app_id.desktop" "$data/mime/packages/$app_id.xml"
rm -f "$data"/icons/hicolor/*/apps/"$app_id".png "$data/icons/hicolor/scalable/apps/$app_id.svg"
"$here/refresh_desktop_caches.sh" "$data"
echo "Removed Checkpoint Inspector's desktop entry, MIME types and icons from $data"
