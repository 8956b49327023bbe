"""The one exception family for everything that can be wrong with a checkpoint on disk.

Every message names the file and says what is wrong with it, so the CLI can print it as one line
and the GUI can show it in a dialog without adding context of its own.
"""
from __future__ import annotations

import os


class CheckpointError(Exception):
    """Base of all checkpoint problems; `path` is the file (or folder) the problem is in."""

    def __init__(self, path: str | os.PathLike | None, problem: str):
        self.path = os.fspath(path) if path is not None else None
        self.problem = problem
        super().__init__(f"{self.path}: {problem}" if self.path else problem)


class NotACheckpointError(CheckpointError):
    """The path exists but holds no TensorFlow checkpoint (wrong magic, wrong kind of table, no index)."""


class CorruptCheckpointError(CheckpointError):
    """The file is a checkpoint but its bytes are damaged: truncated, out-of-range sizes, bad encoding."""


class ChecksumMismatchError(CorruptCheckpointError):
    """A stored CRC32C does not match the bytes (an index block or a tensor's data)."""


class MissingShardError(CheckpointError):
    """A data shard the index refers to is not on disk (or is shorter than the index says)."""


class UnsupportedDtypeError(CheckpointError):
    """A tensor's dtype is unknown to this reader or cannot be turned into a numpy array."""


class VariableNotFoundError(CheckpointError):
    """The asked-for variable is not in the checkpoint."""
