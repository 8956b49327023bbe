"""The Python API: what `import checkpoint_inspector as ci` gives a notebook or a script.

A face over the engine, beside the CLI and the window (the top floor of .importlinter's layers): it opens
paths through the same opener (core.run.discovery and the format table of core.format.readers), computes
with the same jobs, and raises the same error family (core.errors). Nothing here imports PySide6 or
TensorFlow; pandas is imported only when a frame is asked for (core.api.frames).

Rooms: runs (ci.open, Run: steps, checkpoints, trajectories, the overview, logged scalars, the diagnosis),
checkpoints (Checkpoint, Variable: listing and values), logs (ci.scalars, ci.open_logs: TensorBoard logs without
a checkpoint), comparing (diff, check, remap), progress (the tqdm bar of long calls, ci.show_progress), graphs
(ci.graph: the model's graph, DOT, SVG), frames (pandas).
"""
from __future__ import annotations

from .checkpoints import Checkpoint, Variable
from .comparing import Check, Difference, check, diff, remap
from .graphs import Graph, graph
from .logs import Logs, open_logs, scalars
from .progress import show_progress
from .runs import Finding, Run, open_run

__all__ = ["Check", "Checkpoint", "Difference", "Finding", "Graph", "Logs", "Run", "Variable", "check", "diff", "graph", "open_logs", "open_run",
           "remap", "scalars", "show_progress"]
