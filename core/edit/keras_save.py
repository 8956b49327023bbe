"""Saving an edited Keras file (`.keras`, `.weights.h5`, legacy `.h5`) as a new file of the same kind:
drops, casts and new values (from a .npy, a constant, the value table) applied to a copy of the source
(core.format.keras.writer), written under a temporary name and renamed into place when complete, so a
save killed at any instant leaves no half file and the source is never touched.

Keras finds a weight by its place in the file (`layers/dense/vars/0`), not by a name a plan could give
it: a plan that renames weights, or adds new ones, is refused with what to do instead. A plan that leaves
a layer with other weights than Keras builds for it is saved with a note per layer saying what Keras will
answer (core.edit.keras_load_check).
"""
from __future__ import annotations

import os
import tempfile

from ..atomic_write import atomic_path, new_folders
from ..format import dtypes
from ..format.keras.reader import KerasReader
from ..format.keras.writer import write_archive, write_weights
from ..format.source import SourceKind
from ..jobs import Job, Progress
from .conversion import cast_values
from .keras_layers import keras_layer_renames, renamed_config
from .keras_load_check import keras_load_warnings
from .plan import Preview, RemapPlan


def save_keras_remapped(reader: KerasReader, plan: RemapPlan, destination: str, result: Preview, report) -> Job:
    """Job: the edited copy at `destination` (a file path of the source's kind, judged by core.edit.save
    through core.edit.destination); `result`: the preview of `plan` over the file's weights, checked (the
    one core.edit.save made or was given); fills `report`."""
    layers = keras_layer_renames(reader, result)  # refused here as the preview said (keras_save_problems)
    # Layers Keras would not load are said, not refused: the copy is a new file and may be what the user
    # wants (weights for a changed model); the CLI prints these notes, the window shows them after the save.
    report.notes.extend(keras_load_warnings(reader, result))
    replaced = {}
    changed = [p for p in result.planned if p.values is not None or p.dtype != p.source_dtype]
    for done, planned in enumerate(changed):
        yield Progress(done, len(changed) + 1, f"Preparing {planned.target}")
        target_dtype = dtypes.from_name(planned.dtype)
        values = planned.values.load(planned.shape, target_dtype) if planned.values is not None \
            else reader.read(planned.source)
        replaced[planned.source] = cast_values(values, target_dtype, planned.target, report.cast_warnings)
    yield Progress(len(changed), len(changed) + 1, f"Writing {os.path.basename(destination)}")
    with new_folders(destination):  # made as a save makes them; removed again if it fails
        if reader.kind is not SourceKind.KERAS_ARCHIVE:  # an HDF5 file: the weights are the whole file
            with atomic_path(destination) as temporary:
                write_weights(reader, temporary, replaced, set(result.dropped), layers)
        else:
            with tempfile.TemporaryDirectory(dir=os.path.dirname(destination), prefix=".keras-weights-") as scratch:
                weights = os.path.join(scratch, "model.weights.h5")
                write_weights(reader, weights, replaced, set(result.dropped), layers)
                config = renamed_config(reader.config, _old_to_new(reader, layers)) if layers else None
                with atomic_path(destination) as temporary:
                    write_archive(reader, temporary, weights, config)
    report.written = len(result.planned)
    return report


def _old_to_new(reader, layers: dict[str, str]) -> dict[str, str]:
    """Old layer name -> new, from {vars group path: new name}."""
    named = reader.naming()
    old = {}
    for path, info in named.items():
        group = path.rpartition("/vars/")[0] + "/vars"
        if group in layers and not info.optimizer_state:
            old[info.variable_name.rpartition("/")[0]] = layers[group]
    return old
