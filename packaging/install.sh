#!/usr/bin/env bash
# Adds Checkpoint Inspector to the current user's Linux desktop: the menu entry, the checkpoint MIME
# types (so a double-click on a .index file opens the app, and folders get "Open With"), and the icons,
# all under ${XDG_DATA_HOME:-~/.local/share}. No root needed; packaging/uninstall.sh takes it all back.
#
# Usage: packaging/install.sh [PROGRAM]
#   PROGRAM is what the entry runs, with the chosen paths as arguments. By default: the bundle this
#   script sits in (dist/checkpoint-inspector/_internal/packaging/install.sh), else the checkout's
#   built bundle dist/checkpoint-inspector/checkpoint-inspector, else the checkout's ./run-app.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"  # the checkout, or the bundle's _internal/: both hold packaging/ and resources/
data="${XDG_DATA_HOME:-$HOME/.local/share}"
app_id=checkpoint-inspector

program="${1:-}"
if [ -z "$program" ]; then
  for candidate in "$root/../$app_id" "$root/dist/$app_id/$app_id" "$root/run-app"; do
    if [ -f "$candidate" ] && [ -x "$candidate" ]; then program="$candidate"; break; fi
  done
fi
if [ -z "$program" ] || [ ! -f "$program" ] || [ ! -x "$program" ]; then
  echo "install.sh: no program to run: ${program:-none found}; build it with packaging/build or name it" >&2
  exit 2
fi
program="$(cd "$(dirname "$program")" && pwd)/$(basename "$program")"  # the entry needs an absolute path

# The desktop entry spec's two layers of quoting: an Exec argument holding a reserved character goes in
# double quotes, inside which \ " ` $ take a backslash; % is doubled; then, as in every string value of
# the file, each backslash is written twice. TryExec is a plain string: only the second layer.
string_escape() { local s="${1//\\/\\\\}"; printf '%s' "$s"; }
exec_quote() {
  local s="$1" reserved=$'[[:space:]"\'\\\\><~|&;$*?#()`]'
  s="${s//%/%%}"
  if [[ "$s" =~ $reserved ]]; then
    s="${s//\\/\\\\}"; s="${s//\"/\\\"}"; s="${s//\`/\\\`}"; s="${s//\$/\\\$}"
    s="\"$s\""
  fi
  string_escape "$s"
}

install -d "$data/applications" "$data/mime/packages" "$data/icons/hicolor/scalable/apps"
entry="$data/applications/$app_id.desktop"
# Rewrite the template line by line (no sed: a path may hold any character sed treats as special).
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in
    Exec=*) printf 'Exec=%s %%F\n' "$(exec_quote "$program")" ;;
    TryExec=*) printf 'TryExec=%s\n' "$(string_escape "$program")" ;;
    *) printf '%s\n' "$line" ;;
  esac
done < "$here/$app_id.desktop" > "$entry.tmp"
mv "$entry.tmp" "$entry"
install -m 644 "$here/$app_id-mime.xml" "$data/mime/packages/$app_id.xml"
install -m 644 "$root/resources/icons/$app_id.svg" "$data/icons/hicolor/scalable/apps/$app_id.svg"
for png in "$root"/resources/icons/hicolor/*/apps/"$app_id.png"; do
  size="$(basename "$(dirname "$(dirname "$png")")")"
  install -d "$data/icons/hicolor/$size/apps"
  install -m 644 "$png" "$data/icons/hicolor/$size/apps/$app_id.png"
done

"$here/refresh_desktop_caches.sh" "$data"
echo "Installed $entry (runs $program)"
