"""Where the app writes, one rule for the CLI and the window: never inside the run a person inspects
unless they picked that exact place.

- What a person saves (an edited copy, an export, a plan) goes, by default, to their outputs folder:
  `$CHECKPOINT_INSPECTOR_OUTPUTS`, else the desktop's documents folder (`$XDG_DOCUMENTS_DIR`, else
  `~/Documents`) under "Checkpoint Inspector". Every save and export dialog starts there, made when first
  needed, or in the last folder a person saved to outside the runs (`save_dialog_folder`); never inside
  an open run or the app's own folder.
- What the app writes for itself about a run (TensorBoard's checkpoint history and graph) lives in the
  app's data folder: `$CHECKPOINT_INSPECTOR_DATA`, else `$XDG_DATA_HOME` (`~/.local/share`) under
  `checkpoint-inspector`, one folder per run, named by the run's path, so TensorBoard is shown it beside
  the run (core.tensorboard) without a byte written into the run.
- `writes_into(path, folder)` tells whether a write lands in a folder's tree (after resolving links, so
  a link into the run counts as the run); a face asks the person before such a write.
"""
from __future__ import annotations

import hashlib
import os
import re
from typing import Iterable

from ..storage import paths

APP_FOLDER_NAME = "checkpoint-inspector"
OUTPUTS_FOLDER_NAME = "Checkpoint Inspector"


def user_outputs_folder() -> str:
    """Where what a person saves goes by default (not made here: a save makes its folder)."""
    chosen = os.environ.get("CHECKPOINT_INSPECTOR_OUTPUTS")
    if chosen:
        return os.path.abspath(os.path.expanduser(chosen))
    documents = os.environ.get("XDG_DOCUMENTS_DIR") or os.path.join(os.path.expanduser("~"), "Documents")
    return os.path.join(os.path.abspath(os.path.expanduser(documents)), OUTPUTS_FOLDER_NAME)


def app_data_folder() -> str:
    """The app's own folder for what it writes about runs (never a run's folder)."""
    chosen = os.environ.get("CHECKPOINT_INSPECTOR_DATA")
    if chosen:
        return os.path.abspath(os.path.expanduser(chosen))
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(os.path.abspath(os.path.expanduser(base)), APP_FOLDER_NAME)


def run_logs_folder(run_folder: str) -> str:
    """The app-owned folder of one run's extra TensorBoard logs (history, graph): its folder's name, made
    safe, and a hash of its full path or URL, so two runs named alike never share one. A local run is
    named by its real path: opened through a link or with a trailing slash it is the same run, and
    TensorBoard on it (core.tensorboard.launcher keys its boards the same way) shows the same logs."""
    text = str(run_folder).rstrip("/\\") or str(run_folder)
    if paths.is_url(text):
        text = paths.normpath(text)
    else:
        text = os.path.realpath(os.path.abspath(os.path.expanduser(paths.local_form(text))))
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", paths.basename(text) or "run")[:60]
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return os.path.join(app_data_folder(), "runs", f"{name}-{digest}")


def writes_into(path: str, folder: str | None) -> bool:
    """Whether writing `path` lands inside `folder`'s tree (the folder itself included)."""
    if not folder:
        return False
    if paths.is_url(path) or paths.is_url(folder):
        inside = paths.normpath(str(folder)).rstrip("/")
        target = paths.normpath(str(path)).rstrip("/")
        return target == inside or target.startswith(inside + "/")
    target, inside = _resolved(path), _resolved(folder)
    return target == inside or target.startswith(inside.rstrip(os.sep) + os.sep)


def _resolved(path: str) -> str:
    """The real place of a path that may not exist yet: its nearest existing parent resolved, the rest kept."""
    path = os.path.abspath(os.path.expanduser(str(path)))
    rest = []
    while not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        rest.append(os.path.basename(path))
        path = parent
    return os.path.join(os.path.realpath(path), *reversed(rest))


def outside(folder: str, avoided: Iterable[str | None]) -> bool:
    """Whether `folder` is in none of the `avoided` folders' trees (links resolved; None and "" skipped):
    a place a save dialog may start in, and a save folder worth remembering (gui.base.dialogs)."""
    return not any(writes_into(folder, place) for place in avoided if place)


def save_dialog_folder(last_folder: str | None, avoided: Iterable[str | None] = ()) -> str:
    """Where every save and export dialog starts: `last_folder` (where the person last saved) when it
    still exists outside the `avoided` folders (the open runs', the app's own), else the outputs folder,
    made now. An existing folder, because Qt opens a dialog given one that is not there wherever its last
    dialog was: inside a run a person double-clicked into, or the app's working folder."""
    avoided = list(avoided)
    if last_folder and os.path.isdir(last_folder) and outside(last_folder, avoided):
        return last_folder
    folder = _outputs_outside(avoided)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:  # an outputs folder that cannot be made (read-only documents): the home folder instead
        home = os.path.expanduser("~")
        return home if outside(home, avoided) else folder
    return folder


def _outputs_outside(avoided: list) -> str:
    """The outputs folder; when an avoided folder is it or holds it (a checkpoint saved into the outputs
    folder and opened again makes it the run), the nearest folder above that is outside them all."""
    folder = user_outputs_folder()
    if outside(folder, avoided):
        return folder
    folder = _resolved(folder)
    while not outside(folder, avoided) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    return folder
