"""Saving a remapped checkpoint: the plan's preview turned into a new bundle at a new prefix.

Unchanged tensors (renamed or not) are copied byte range by byte range, never decoded, so memory stays
flat whatever the checkpoint's size; cast and edited tensors are decoded, converted and encoded; a
partitioned variable that is only renamed keeps its partitions (each slice copied under its new key),
one whose values change is merged into one tensor (TensorFlow restores a partitioned variable from a
whole tensor as well). A TF2 object graph is rewritten to match (core.format.bundle.object_graph_edit), or dropped
when the plan asks for a name-based checkpoint. The destination must be a new place (judged by
core.edit.destination): writing onto the source is refused, an existing destination needs `overwrite`. Files are written under temporary names
and renamed when complete (core.atomic_write); over an existing checkpoint the new data take names its
index does not use and the new index replaces the old in one rename (core.format.bundle.commit), so
TensorFlow loads the whole old or the whole new checkpoint whenever the save is killed. Only then does
a `checkpoint` state file name the new checkpoint (itself replaced in one rename).
"""
from __future__ import annotations

import os
from contextlib import nullcontext
from dataclasses import dataclass, field

from ..atomic_write import name_the_file, new_folders
from ..errors import CheckpointError, CorruptCheckpointError, DecodeError, GraphEditError, InputError
from ..format import dtypes
from ..format.bundle.reader import data_file_path
from ..format.source import CheckpointSource, SourceKind
from ..format.bundle.writer import BundleWriter
from ..format.checkpoint_keys import OBJECT_GRAPH_KEY
from ..format.checkpoint_state import STATE_FILE_NAME, read_state_file, resolve, write_state_file
from ..format.bundle.object_graph import stored_object_graph
from ..format.bundle.object_graph_edit import rewrite
from ..jobs import Job, Progress
from ..run.discovery import CheckpointInfo
from ..run.variables import VariableInfo, describe_variables
from ..storage import files, paths
from .conversion import cast_values
from .destination import judge_destination
from .draft import Planned
from .plan import Preview, RemapPlan, preview


@dataclass
class SaveReport:
    prefix: str
    written: int = 0
    copied_bytes: int = 0
    cast_warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def save_remapped(reader: CheckpointSource, plan: RemapPlan, destination: str, overwrite: bool = False,
                  state_file: bool = True, make_latest: bool = False, *, plan_preview: Preview | None = None,
                  variables: list[VariableInfo] | None = None) -> Job[SaveReport]:
    """Job: write the remapped checkpoint to `destination` (a prefix); returns a SaveReport.
    state_file: name it in its folder's `checkpoint` file where that changes no existing run (see
    _name_in_state_file); make_latest: also where it does, as the person asked. A URL destination is
    written locally, then uploaded (core.edit.remote_save). What the caller already holds is taken, not
    made again: `plan_preview`, the preview of `plan` over this reader's variables (the one a person saw),
    else `variables`, this reader's described variables (core.run.variables), of which it is made once.
    The destination is judged by core.edit.destination (DestinationError when it is not acceptable)."""
    if reader.kind is SourceKind.SAVED_MODEL_WITHOUT_VARIABLES:  # an empty checkpoint would be no copy of it
        raise InputError(reader.prefix, "is a SavedModel that stores no variables (its weights, if any, are "
                                        "constants in its graph): there is no checkpoint to remap")
    if not paths.is_url(destination):
        destination = os.path.abspath(destination)
    judge_destination(reader.prefix, destination, None, overwrite, kind=reader.kind).check()
    result = plan_preview if plan_preview is not None else \
        preview(plan, variables if variables is not None else describe_variables(reader))
    result.check(reader.prefix)
    if paths.is_url(destination):
        return (yield from _save_to_url(reader, plan, destination, result, state_file, make_latest))
    if reader.kind.is_keras:  # a Keras file: an edited copy of the same kind
        from .keras_save import save_keras_remapped

        return (yield from save_keras_remapped(reader, plan, destination, result, SaveReport(destination)))
    report = SaveReport(destination)
    graph = _new_object_graph(reader, plan, result)
    if reader.kind is SourceKind.V1_TABLE:
        report.notes.append(f"{reader.prefix} is a V1 checkpoint: the remapped one is written in the V2 format "
                            f"(an .index and a .data file), which TensorFlow reads the same way")
    if os.path.exists(reader.prefix + ".meta"):
        report.notes.append("The TF1 .meta graph file was not copied: its variable names would no longer match.")
    planned = [p for p in result.planned if not (p.source == OBJECT_GRAPH_KEY)]
    # New parent folders, as tf.train.Checkpoint.write makes them; removed again if the save fails.
    with new_folders(destination):
        writer = BundleWriter(destination, reader.header.producer or 1)
        report.notes += writer.recovered
        try:
            total = max(sum(_size(reader, p) for p in planned), 1)
            done = 0
            # Copies in the source's data order: one sequential pass over its shards.
            planned.sort(key=lambda p: _data_order(reader, p))
            for p in planned:
                yield Progress(done, total, f"Writing {p.target}")
                _write_one(reader, writer, p, report)
                done += _size(reader, p)
                report.written += 1
            if graph is not None:
                import numpy as np

                writer.add_array(OBJECT_GRAPH_KEY.encode(), np.array(graph, dtype=object), dtypes.from_number(7))
            yield Progress(total, total, "Writing the index")
            writer.commit()
        except BaseException as exc:
            writer.abort()
            name_the_file(exc, writer.data_path)
            raise
    if state_file:
        _name_in_state_file(destination, reader.prefix, make_latest, report)
    return report


def _save_to_url(reader, plan: RemapPlan, destination: str, result: Preview, state_file: bool,
                 make_latest: bool) -> Job[SaveReport]:
    """Written in a local staging folder (judged there again: a new place), then uploaded."""
    from .remote_save import staged

    state_there = files.exists(paths.join(paths.dirname(destination), STATE_FILE_NAME))
    name_it = state_file and not state_there  # a new folder gets its state file, an existing one is kept
    report = yield from staged(lambda local: save_remapped(reader, plan, local, False, name_it, plan_preview=result),
                               destination)
    report.prefix = destination
    if state_file and state_there:
        report.notes.append(f"{paths.dirname(destination)} has a `checkpoint` state file already: it was left "
                            f"as it is" + (" (--make-latest is not done on remote folders)" if make_latest else ""))
    return report


def _name_in_state_file(destination: str, source_prefix: str, make_latest: bool, report: SaveReport) -> None:
    """A new folder gets a `checkpoint` file naming the new checkpoint. A folder whose runs already has
    one, or the source's own folder, keeps its file as it is (else `tf.train.latest_checkpoint` and a
    resumed training would take the remapped checkpoint, and CheckpointManager would forget the others),
    unless make_latest: then the new checkpoint is added to its list as the latest. A state file that
    cannot be written does not undo a complete checkpoint: it is said in a note."""
    folder = os.path.dirname(destination)
    state_path = os.path.join(folder, STATE_FILE_NAME)
    has_state = os.path.exists(state_path)
    source_folder = os.path.realpath(os.path.dirname(os.path.abspath(source_prefix)))
    if not make_latest and (has_state or os.path.realpath(folder) == source_folder):
        report.notes.append(f"{state_path if has_state else folder}: the run's latest checkpoint is left as it was "
                            f"(restore the new one by its prefix, or ask to make it the latest)")
        return
    prefixes = [destination]
    if has_state:
        try:
            listed = [resolve(p, folder) for p in read_state_file(state_path).all_paths]
        except CheckpointError:
            listed = []
        prefixes = [p for p in dict.fromkeys(listed) if p != destination] + [destination]
    try:
        write_state_file(folder, prefixes)
    except OSError as exc:
        report.notes.append(f"{state_path}: could not be written ({exc.strerror or exc}); the checkpoint itself "
                            f"is complete: restore it by its prefix {destination}")


def _new_object_graph(reader, plan: RemapPlan, result) -> bytes | None:
    data = None if plan.name_based else stored_object_graph(reader)
    if data is None:
        return None
    renamed = {p.source: p.target for p in result.planned if p.source and p.source != p.target}
    try:
        full_names = {p.source: p.variable_name for p in result.planned if p.source and p.variable_name is not None}
        return rewrite(data, renamed, set(result.dropped), plan.rename_path, full_names)
    except GraphEditError as exc:
        raise GraphEditError(reader.prefix, exc.problem) from None
    except DecodeError as exc:
        raise CorruptCheckpointError(reader.prefix, f"damaged object graph ({exc.problem})") from None


def _size(reader: CheckpointSource, planned: Planned) -> int:
    if not planned.source or planned.source not in reader:
        return 1
    entry = reader.entry(planned.source)
    return entry.size or entry.nbytes  # a V1 entry has no byte range: its values' size


def _data_order(reader: CheckpointSource, planned: Planned):
    if planned.source is None:
        return (1 << 62, 0)
    entry = reader.entry(planned.source)
    return (entry.shard_id, entry.offset)


def _write_one(reader: CheckpointSource, writer: BundleWriter, planned: Planned, report: SaveReport) -> None:
    key = planned.target.encode("utf-8", "surrogateescape")
    target_dtype = dtypes.from_name(planned.dtype)
    if planned.source is None or planned.values is not None:
        values = planned.values.load(planned.shape, target_dtype)
        writer.add_array(key, cast_values(values, target_dtype, planned.target, report.cast_warnings), target_dtype)
        return
    entry = reader.entry(planned.source)
    if planned.dtype == planned.source_dtype and reader.kind.has_byte_ranges:  # copied as bytes, not decoded
        if entry.is_partitioned:
            slices = reader.slices_of(entry.key)
            writer.add_partitioned(key, entry, [(s.extents, s.entry, _shard(reader, s.entry)) for s in slices])
        else:
            writer.add_copy(key, entry, _shard(reader, entry))
            report.copied_bytes += entry.size
        return
    values = cast_values(reader.read(planned.source), target_dtype, planned.target, report.cast_warnings)
    writer.add_array(key, values, target_dtype)


def _shard(reader: CheckpointSource, entry) -> str:
    return data_file_path(reader.prefix, entry.shard_id, reader.header.num_shards)


def save_remapped_run(checkpoints: list[CheckpointInfo], plan: RemapPlan, destination_folder: str,
                      overwrite: bool = False, *, reader: CheckpointSource | None = None,
                      plan_preview: Preview | None = None,
                      variables: list[VariableInfo] | None = None) -> Job[list[SaveReport]]:
    """Job: the same plan applied to every checkpoint of a run, into a new folder with its state file.
    `reader`: one of them already open (the one shown), used as it is (and left open), with what is
    known of it as save_remapped takes it (`plan_preview`, `variables`); the others are opened here."""
    judge_destination(checkpoints, destination_folder, None, overwrite).check()
    if paths.is_url(destination_folder):
        from .remote_save import staged

        reports = yield from staged(lambda local: save_remapped_run(checkpoints, plan, local, reader=reader,
                                                                    plan_preview=plan_preview, variables=variables),
                                    destination_folder, folder=True)
        for report in reports:
            report.prefix = paths.join(destination_folder, paths.basename(report.prefix))
        return reports
    with new_folders(os.path.join(destination_folder, STATE_FILE_NAME)):  # the folder, gone again if nothing is saved
        reports, checkpoints_written = [], False
        for index, info in enumerate(checkpoints):
            yield Progress(index, len(checkpoints), f"Remapping {info.name}")
            target = os.path.join(destination_folder, info.name)
            known = reader is not None and info.prefix == reader.prefix
            # opened here, so closed here (a Keras file's HDF5 handle); the caller's stays open
            with nullcontext(reader) if known else info.open_reader() as opened:
                checkpoints_written |= opened.kind.is_tensorflow  # a Keras file is saved as one, named by no state file
                reports.append((yield from save_remapped(opened, plan, target, overwrite, state_file=False,
                                                         plan_preview=plan_preview if known else None,
                                                         variables=variables if known else None)))
        if checkpoints_written:
            write_state_file(destination_folder, [r.prefix for r in reports])
    return reports
