"""The graph of a run: which `.meta` or SavedModel graph a path means (the very graph that wrote the
checkpoint compared with, where there is one), summarised and compared with that checkpoint; the CLI's
`graph` command and the window's Graph dialog both ask here; and the whole model graph a path means, for
drawing it (model_graph_of: a `.meta`, a SavedModel or a Keras model's config).

A graph file alone is compared with the checkpoint of its own prefix when there is one (with a step:
its run's checkpoint at that step), and not compared otherwise; a damaged or missing checkpoint leaves
the graph shown, with a note saying why it was not compared.
"""
from __future__ import annotations

import os

from ..errors import CheckpointError, NotACheckpointError
from ..format.graph.model import ModelGraph
from ..format.keras.files import has_keras_name
from ..format.graph.summary import (META_SUFFIX, SAVED_MODEL_FILE, GraphSummary, checkpoint_names, find_graph_file,
                                    read_graph_summary)
from .discovery import CheckpointInfo
from .loading import checkpoint_at
from .variables import describe_variables


def graph_of(path: str, step: int | None = None) -> tuple[GraphSummary, str]:
    """The summary of the graph PATH means, compared with its checkpoint where there is one; and a note
    saying why it was not compared (empty when it was)."""
    graph_file, saved_model = find_graph_file(path)
    name = os.path.basename(path)
    given_a_graph_file = os.path.isfile(path) and (name == SAVED_MODEL_FILE or name.endswith(META_SUFFIX))
    source = path
    if given_a_graph_file:  # its SavedModel folder; its own prefix; or, for --step, its run
        source = os.path.dirname(graph_file) if saved_model or step is not None else graph_file[:-len(META_SUFFIX)]
    checkpoint, reader, note = _checkpoint(source or ".", step)
    if checkpoint is not None and not given_a_graph_file and os.path.isfile(checkpoint.prefix + META_SUFFIX):
        graph_file = checkpoint.prefix + META_SUFFIX  # the graph that wrote this very checkpoint
    summary = read_graph_summary(graph_file)
    if checkpoint is None:
        return summary, note
    return summary.compared_with(checkpoint_names(describe_variables(reader)), checkpoint.prefix), ""


def _checkpoint(source: str, step: int | None) -> tuple[CheckpointInfo | None, object, str]:
    try:
        checkpoint, reader = checkpoint_at(source, step)
        return checkpoint, reader, ""
    except CheckpointError as exc:
        if step is not None:  # a checkpoint was asked for: not finding or reading it is the answer
            raise
        # The graph is still worth showing when there is no checkpoint beside it, or a damaged one.
        return None, None, f"not compared with a checkpoint ({exc})"


def model_graph_of(path: str) -> ModelGraph:
    """The whole model graph PATH means, for drawing: a Keras model file's config (`.keras`, a legacy `.h5`
    or a `config.json`), else the `.meta` or SavedModel graph find_graph_file finds (a run folder or prefix:
    the graph beside its checkpoints); a run of Keras model files: its latest one's config."""
    from ..format.graph.graph_nodes import read_model_graph  # here: protobuf's parser loads on first use
    from ..format.keras.model_graph import read_keras_model_graph

    if is_keras_model_path(path):
        return read_keras_model_graph(path)  # a weights-only file is refused there, named, not passed on
    try:
        graph_file, _ = find_graph_file(path)
    except NotACheckpointError:
        latest = _latest_keras_model(path)
        if latest is None:
            raise
        return read_keras_model_graph(latest)
    return read_model_graph(graph_file)


def has_model_graph(path: str) -> bool:
    """Whether PATH (a checkpoint's prefix or file) has a model graph to draw, told from file names alone:
    a Keras model file, or a `.meta` or SavedModel graph find_graph_file finds beside it (the window
    offers its Graph view when it has)."""
    if _is_keras_model_file(path):
        return True
    try:
        find_graph_file(path)
    except (CheckpointError, OSError):
        return False
    return True


def is_keras_model_path(path: str) -> bool:
    """Whether PATH names a Keras file or a model's config.json (its graph is the Keras reader's)."""
    return _is_keras_model_file(path) or (os.path.isfile(path) and has_keras_name(path))


def _is_keras_model_file(path: str) -> bool:
    name = os.path.basename(path)
    return os.path.isfile(path) and (name == "config.json" or name.endswith(".keras")
                                     or (name.endswith(".h5") and not name.endswith(".weights.h5")))


def _latest_keras_model(path: str) -> str | None:
    """The latest checkpoint of the run at `path` when it is a Keras model file; None otherwise."""
    try:
        checkpoint, reader = checkpoint_at(path)
    except CheckpointError:
        return None
    reader.close()
    return checkpoint.prefix if _is_keras_model_file(checkpoint.prefix) else None
