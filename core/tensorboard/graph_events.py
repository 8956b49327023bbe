"""Show a run's graph in TensorBoard: the GraphDef of its `.meta` or SavedModel, written as an event file
in the app's folder of the run's logs (core.tensorboard.run_logs: never the run, which may be a URL),
which TensorBoard started on the run shows beside it as a run of its own.

The event is what TensorFlow's FileWriter.add_graph writes for a graph: an Event whose `graph_def`
holds the serialized GraphDef, after the file-version event every event file starts with. The GraphDef
bytes are passed on as the file stores them, unparsed (core.format.graph.summary.read_graph_def_bytes).
The folder is written and replaced as the checkpoint history's is (core.tensorboard.event_folder): all
at once, and never over a folder that holds anything but event files.
"""
from __future__ import annotations

import os
import time

from ..format.graph.summary import read_graph_def_bytes
from .event_folder import check_replaceable, folder_in_place, new_event_file
from .run_logs import graph_folder, staging_folder

GRAPH_FOLDER_NAME = "graph"  # what the graph's event file names end with
_WHAT = "the graph"


def write_graph_events(summary_source_path: str | os.PathLike, run_folder: str | os.PathLike) -> str:
    """Write the graph of `summary_source_path` (anything core.format.graph.summary.read_graph_summary
    reads: a `.meta`, a SavedModel, a run or prefix with a `.meta`) for the run at `run_folder` (a path or
    URL, only named, never written) into graph_folder(run_folder), replacing an earlier graph there;
    returns the event file's path. The graph is read and checked first, so bad input (an InspectorError
    naming the file) leaves the disk untouched."""
    from tensorboard.compat.proto import event_pb2

    _, graph_def = read_graph_def_bytes(summary_source_path)
    target = graph_folder(run_folder)
    check_replaceable(target, _WHAT, GRAPH_FOLDER_NAME)
    with folder_in_place(target, _WHAT, GRAPH_FOLDER_NAME, staging_folder(target)) as partial:
        with new_event_file(partial, GRAPH_FOLDER_NAME) as events:
            events.write(event_pb2.Event(wall_time=time.time(), step=0, graph_def=graph_def))
    return os.path.join(target, os.path.basename(events.path))
