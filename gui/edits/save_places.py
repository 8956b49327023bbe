"""Where the Edits dock's Save As writes: a new prefix or an edited Keras file for the checkpoint shown,
a new folder for the whole run. Every suggestion is in the outputs folder (core.run.outputs), never in the
run; a place inside the run is taken only once the person said yes to what it adds there
(gui.base.dialogs.save_output), and a place refused for this checkpoint is said there (core.edit.destination
judges both); an existing checkpoint is replaced only after a Yes."""
from __future__ import annotations

import os

from checkpoint_inspector.core.run.discovery import keras_name_parts

from ..base import dialogs, errors


def ask_destination(session, parent, whole_run: bool) -> tuple[str, bool] | None:
    """(the place to save the plan of the checkpoint shown, or of every checkpoint of its run, whether it
    replaces what is there), or None when the person chose no place."""
    current = session.current
    if whole_run:
        name = os.path.basename(current.run.folder.rstrip("/\\")) or "run"
        checkpoints = list(current.run.checkpoints)
        folder = dialogs.save_output_folder(session, "Save every checkpoint of the run into a new folder",
                                            f"{name}-remapped", "a copy of every checkpoint (a second run inside it)",
                                            checkpoints)
        overwrite = _confirm_overwrite(session, parent, checkpoints, folder) if folder else None
        return (folder, overwrite) if overwrite is not None else None
    reader = current.reader
    if reader.kind.is_keras:  # an edited file of the same kind
        stem, suffix = keras_name_parts(current.checkpoint.prefix)
        path = dialogs.save_output(session, "Save the edited Keras file as", os.path.basename(f"{stem}-edited{suffix}"),
                                   what="an edited Keras file", source=reader.prefix, kind=reader.kind)
    else:
        path = dialogs.save_output(session, "Save the remapped checkpoint as (a new prefix)",
                                   os.path.basename(current.checkpoint.prefix) + "-remapped",
                                   what="a checkpoint (one more row of the run, at the same step)",
                                   source=reader.prefix, kind=reader.kind)
    overwrite = _confirm_overwrite(session, parent, reader.prefix, path, reader.kind) if path else None
    return (path, overwrite) if overwrite is not None else None


def _confirm_overwrite(session, parent, source, path: str, kind=None) -> bool | None:
    """Whether the save to `path` replaces what is there (True only after the person's Yes), or None
    when it is not to be saved: a place core.edit.destination refuses (said), or a No. `source`: the
    checkpoint's prefix (and SourceKind `kind`), or the run's checkpoints copied into the folder `path`.
    The question of writing into the run was asked before (gui.base.dialogs.save_output)."""
    from checkpoint_inspector.core.edit.destination import Verdict, judge_destination

    judged = judge_destination(source, path, None, False, kind=kind)
    replaces = judged.verdict is Verdict.EXISTS
    if replaces:
        judged = judge_destination(source, path, None, True, kind=kind)  # what replacing it would meet
    if judged.refused:
        errors.show_error(session.dialog_parent, "Cannot save there", errors.describe(judged.error()))
        return None
    if replaces and not dialogs.ask_yes_no(parent, "Replace?", f"{path} holds a checkpoint already. Replace it?",
                                           default_yes=False):
        return None
    return replaces
