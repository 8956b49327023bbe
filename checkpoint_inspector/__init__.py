"""Checkpoint Inspector as a library: TensorFlow and Keras checkpoints read, compared and fixed from
Python, without TensorFlow, Keras or Qt.

    import checkpoint_inspector as ci
    with ci.open("runs/exp1") as run:        # a run folder, prefix, file, SavedModel, Keras file or URL
        ckpt = run.checkpoint()              # the latest; run.checkpoint(step=100) another
        kernel = ckpt["dense/kernel"]        # numpy, bit for bit TensorFlow's
        run.trajectory("dense/kernel", "l2") # pandas Series indexed by step

docs/api.md documents every name. The package holds the engine (`checkpoint_inspector.core`), the window
(`checkpoint_inspector.gui`, with the [gui] extra) and their resources; in a checkout these are the
folders core/, gui/ and resources/ beside this one (symbolic links here), so the checkout and an
installed copy import the same names. Every error raised is a checkpoint_inspector.InspectorError.

The public names are looked up when first used (PEP 562), so that the program's entry
(checkpoint_inspector.launcher: the CLI, the window) pays nothing for the API at start-up.
"""
from __future__ import annotations

import importlib

__version__ = "0.5.0"

_API = {"open": "open_run", "diff": "diff", "check": "check", "remap": "remap", "Run": "Run",
        "Checkpoint": "Checkpoint", "Variable": "Variable", "Finding": "Finding", "Difference": "Difference",
        "Check": "Check", "graph": "graph", "Graph": "Graph",
        "scalars": "scalars", "open_logs": "open_logs", "Logs": "Logs", "show_progress": "show_progress"}
_ERRORS = ("InspectorError", "CheckpointError", "NotACheckpointError", "SeveralRunsError", "StepNotFoundError",
           "CorruptCheckpointError", "ChecksumMismatchError", "MissingShardError", "UnsupportedDtypeError", "StorageError",
           "VariableNotFoundError", "AmbiguousNameError", "InputError", "PlanError", "DestinationError",
           "ClosedError")

__all__ = [*_API, *_ERRORS, "__version__"]


def __getattr__(name: str):
    if name in _API:
        value = getattr(importlib.import_module(".core.api", __name__), _API[name])
    elif name in _ERRORS:
        value = getattr(importlib.import_module(".core.errors", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
