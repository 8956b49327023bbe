"""Show a run's graph in TensorBoard: the GraphDef of its `.meta` or SavedModel, written as an event file
in the run's `graph/` sub-folder, where TensorBoard on the run finds it as a run of its own.

The event is what TensorFlow's FileWriter.add_graph writes for a graph: an Event whose `graph_def`
holds the serialized GraphDef, after the file-version event every event file starts with. The GraphDef
bytes are passed on as the file stores them, unparsed (core.format.graph.summary.read_graph_def_bytes).
The folder is written and replaced as the checkpoint history's is (core.tensorboard.event_folder): all
at once, and never over a folder that holds anything but event files.
"""
from __future__ import annotations

import os
import time

from ..errors import DestinationError
from ..format.graph.summary import read_graph_def_bytes
from .event_folder import check_replaceable, folder_in_place, new_event_file

GRAPH_FOLDER_NAME = "graph"
_WHAT = "the graph"


def graph_folder(run_folder: str | os.PathLike) -> str:
    """Where the graph goes: a sub-folder of the run, so TensorBoard on the run shows it beside the logs."""
    return os.path.join(os.path.abspath(os.fspath(run_folder)), GRAPH_FOLDER_NAME)


def write_graph_events(summary_source_path: str | os.PathLike, run_folder: str | os.PathLike) -> str:
    """Write the graph of `summary_source_path` (anything core.format.graph.summary.read_graph_summary
    reads: a `.meta`, a SavedModel, a run or prefix with a `.meta`) into `run_folder`/graph/, replacing
    an earlier graph there; returns the event file's path. The graph is read and checked first, so bad
    input (an InspectorError naming the file) leaves the disk untouched."""
    from tensorboard.compat.proto import event_pb2

    _, graph_def = read_graph_def_bytes(summary_source_path)
    run_folder = os.path.abspath(os.fspath(run_folder))
    if os.path.exists(run_folder) and not os.path.isdir(run_folder):
        raise DestinationError(run_folder, "is a file, not a run folder to put the graph in")
    target = graph_folder(run_folder)
    check_replaceable(target, _WHAT, GRAPH_FOLDER_NAME)
    with folder_in_place(target, _WHAT, GRAPH_FOLDER_NAME) as partial:
        with new_event_file(partial, GRAPH_FOLDER_NAME) as events:
            events.write(event_pb2.Event(wall_time=time.time(), step=0, graph_def=graph_def))
    return os.path.join(target, os.path.basename(events.path))
