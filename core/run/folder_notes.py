"""What a run folder's listing says needs saying, without mending anything (opening a folder never writes
to it): what interrupted saves left there, and files named as a checkpoint's prefix. core.run.discovery
adds these lines to the run's warnings."""
from __future__ import annotations

from ..atomic_write import writer_is_gone
from ..format.bundle.commit import leftovers
from ..storage import paths


def interrupted_saves(folder: str, names: list[str]) -> list[str]:
    """What killed saves left here (`names`: the folder's listing); the next save into it mends
    (core.format.bundle.commit)."""
    notes = []
    aside = leftovers(folder, names)
    if aside:
        notes.append(f"{folder}: an interrupted save left {aside[0]}" + (f" and {len(aside) - 1} more file(s)"
                     if len(aside) > 1 else "") + "; the next save into this folder restores or removes them")
    stale = [n for n in names if n.endswith(".partial") and writer_is_gone(folder, n)]
    if stale:
        notes.append(f"{folder}: {len(stale)} temporary file(s) of interrupted saves ({stale[0]}); the next "
                     f"save into this folder removes them")
    return notes


def files_named_as_prefixes(folder: str, names: list[str]) -> list[str]:
    """A file whose name is a checkpoint's prefix (`cp.ckpt` beside `cp.ckpt.index`: an HDF5 model saved
    there before Keras 2's `save_weights("cp.ckpt")` wrote TensorFlow's format) is not the checkpoint:
    TensorFlow's `load_checkpoint("cp.ckpt")` reads the prefix. Said, so the file is not taken for it."""
    present = set(names)
    return [f"{paths.join(folder, name[:-len('.index')])}: a file of this name lies beside the checkpoint "
            f"{name[:-len('.index')]} (its .index); TensorFlow reads the checkpoint, as this run does: open the "
            f"file by itself to see it" for name in names if name.endswith(".index") and name[:-len(".index")] in present]
