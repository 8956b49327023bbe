"""The TensorBoard logs the app writes about one run, its checkpoint history and its graph: where they go
and the names TensorBoard shows them by.

They go to the app's own folder for the run (core.run.outputs.run_logs_folder: under the user's data
folder, `$CHECKPOINT_INSPECTOR_DATA`), never into the run, which stays the user's byte for byte; a
remote run's go to a local folder named by its URL. The folder holds `checkpoint_history/` and `graph/`.
TensorBoard is started on the run plus that folder, named "inspector" in its `--logdir_spec`
(core.tensorboard.process), so they appear beside the run's own logs as the runs
`inspector/checkpoint_history` and `inspector/graph`: apart from the run's own sub-folders, such as a
`graph/` of its FileWriter or a `checkpoint_history/` an older version of the app wrote into it.

The folder is named whether it exists yet or not: TensorBoard looks for runs in every folder of its spec
again at each reload, so a history or graph written while it runs shows up in the board already open, at
the same address. For the same reason a history or graph is written in a partial folder outside it
(staging_folder), never in a hidden folder TensorBoard would read as one more run.
"""
from __future__ import annotations

import os

from ..run.outputs import run_logs_folder

BOARD_NAME = "inspector"  # a --logdir_spec name: no comma or colon, not starting with "/"
HISTORY_SUBFOLDER = "checkpoint_history"
GRAPH_SUBFOLDER = "graph"
# What TensorBoard calls them: the spec's name joined to the sub-folder as its multiplexer joins them.
HISTORY_RUN = os.path.join(BOARD_NAME, HISTORY_SUBFOLDER)
GRAPH_RUN = os.path.join(BOARD_NAME, GRAPH_SUBFOLDER)


def history_folder(run_folder: str | os.PathLike) -> str:
    """Where the checkpoint history of the run at `run_folder` (a path or URL) goes."""
    return os.path.join(run_logs_folder(os.fspath(run_folder)), HISTORY_SUBFOLDER)


def graph_folder(run_folder: str | os.PathLike) -> str:
    """Where the graph shown in TensorBoard for the run at `run_folder` goes."""
    return os.path.join(run_logs_folder(os.fspath(run_folder)), GRAPH_SUBFOLDER)


def app_logs(run_folder: str | os.PathLike) -> dict[str, str]:
    """The `--logdir_spec` entries shown beside the run: name -> the app's folder of its logs."""
    return {BOARD_NAME: run_logs_folder(os.fspath(run_folder))}


def staging_folder(target: str | os.PathLike) -> str | None:
    """Where the partial folder of `target` is made (core.tensorboard.event_folder): for a folder in the
    app's logs of a run, the folder of every run's logs, outside what TensorBoard reads; None (beside
    the target) for any other folder."""
    runs = os.path.dirname(run_logs_folder("run"))  # the parent of every run's logs folder, whatever the run
    parent = os.path.dirname(os.path.abspath(os.fspath(target)))
    return runs if os.path.dirname(parent) == runs else None
