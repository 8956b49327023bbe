"""Where the app writes, one rule for the CLI and the window: never inside the run a person inspects
unless they picked that exact place.

- What a person saves (an edited copy, an export, a plan) goes, by default, to their outputs folder:
  `$CHECKPOINT_INSPECTOR_OUTPUTS`, else the desktop's documents folder (`$XDG_DOCUMENTS_DIR`, else
  `~/Documents`) under "Checkpoint Inspector". Suggestions are made there (or in the last folder a
  person chose, when that is not inside the run), never inside the run.
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


def suggested_folder(run_folder: str | None, last_folder: str | None = None) -> str:
    """Where a save or export dialog starts: the last folder a person chose, unless it is inside the
    run; else the outputs folder, unless the run is that folder or holds it (a checkpoint saved there
    and opened again), then the folder beside the run."""
    if last_folder and not writes_into(last_folder, run_folder):
        return last_folder
    folder = user_outputs_folder()
    if writes_into(folder, run_folder):
        folder = os.path.dirname(os.path.realpath(os.path.abspath(os.path.expanduser(str(run_folder)))))
    return folder


def suggested_path(name: str, run_folder: str | None, last_folder: str | None = None) -> str:
    """A file name suggested for a save or export: `name` in the suggested folder."""
    return os.path.join(suggested_folder(run_folder, last_folder), name)
