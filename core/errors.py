"""The one exception family of the engine: every problem a person can cause or meet is an InspectorError.

Each error names where the problem is (a file or folder, or the input: a filter text, a plan, a
command line) and says what is wrong, so the CLI prints any of them as one line with one `except` and
the GUI shows its message as is. Subclasses say the cause:

    InspectorError
    ├── CheckpointError            something about a checkpoint or run on disk
    │   ├── NotACheckpointError    not a checkpoint at all (wrong magic, no index, nothing there)
    │   │   ├── SeveralRunsError   a folder of several runs, where one was needed
    │   │   └── StepNotFoundError  a run with no checkpoint at the step asked for (also a KeyError)
    │   ├── CorruptCheckpointError damaged bytes (truncated, out-of-range sizes, bad encoding)
    │   │   ├── ChecksumMismatchError
    │   │   └── DecodeError        bytes a low-level decoder rejects (no file yet: its caller adds it)
    │   ├── MissingShardError      a data shard is missing or shorter than the index says
    │   ├── UnsupportedDtypeError  a dtype this reader cannot turn into numbers
    │   ├── StorageError           a file could not be read (I/O error, looping link) or a remote store failed
    │   └── VariableNotFoundError  no such variable (also a KeyError, as in h5py)
    │       └── AmbiguousNameError a name that fits several variables
    ├── InputError                 what a person typed or loaded is not usable
    │   ├── FilterError            a filter that is not a valid regular expression
    │   ├── UsageError             a command line that does not parse
    │   └── PlanError              a remap plan that cannot be applied (or read)
    │       └── GraphEditError     renames the TF2 object graph cannot express
    ├── DestinationError           a place we were asked to write to is not acceptable
    ├── ClosedError                a run or checkpoint of the Python API used after it was closed
    └── TensorBoardError           TensorBoard is missing or cannot serve a folder
"""
from __future__ import annotations

import os


class InspectorError(Exception):
    """Base of every error the engine reports; `path` is the file, folder or input the problem is in."""

    def __init__(self, path: str | os.PathLike | None, problem: str):
        self.path = os.fspath(path) if path is not None else None
        self.problem = problem
        super().__init__(self.message)

    @property
    def message(self) -> str:
        return f"{self.path}: {self.problem}" if self.path else self.problem

    def __str__(self) -> str:  # KeyError would quote the message; the family reads the same everywhere
        return self.message

    def __reduce__(self):  # pickled whole (a Dask worker sends its errors back): args alone lose `problem`
        return _rebuilt, (type(self), dict(self.__dict__))


def _rebuilt(kind: type, state: dict) -> InspectorError:
    error = kind.__new__(kind)
    error.__dict__.update(state)
    Exception.__init__(error, error.message)
    return error


class CheckpointError(InspectorError):
    """A problem with a checkpoint or run on disk; `path` is the file or folder it is in."""


class NotACheckpointError(CheckpointError):
    """The path exists but holds no TensorFlow checkpoint (wrong magic, wrong kind of table, no index)."""


class SeveralRunsError(NotACheckpointError):
    """A folder holding several runs where one run was needed; `runs` are their folders."""

    def __init__(self, path, problem: str, runs: list[str]):
        super().__init__(path, problem)
        self.runs = list(runs)


class StepNotFoundError(NotACheckpointError, KeyError):
    """The run has no checkpoint at the asked-for global step (a KeyError too: the API's `run[step]`)."""


class CorruptCheckpointError(CheckpointError):
    """The file is a checkpoint but its bytes are damaged: truncated, out-of-range sizes, bad encoding."""


class ChecksumMismatchError(CorruptCheckpointError):
    """A stored CRC32C does not match the bytes (an index block or a tensor's data)."""


class DecodeError(CorruptCheckpointError):
    """Bytes that do not decode (a varint, a protobuf field, Snappy, OrderedCode). Raised by the wire
    decoders, which do not know the file; the reader catches it and raises a CorruptCheckpointError that
    names the file and the entry."""

    def __init__(self, problem: str):
        super().__init__(None, problem)


class MissingShardError(CheckpointError):
    """A data shard the index refers to is not on disk (or is shorter than the index says)."""


class UnsupportedDtypeError(CheckpointError):
    """A tensor's dtype is unknown to this reader or cannot be turned into a numpy array."""


class StorageError(CheckpointError):
    """A file could not be read: a local one the system refuses (an I/O error, a symbolic link that
    loops, no permission), or one behind a URL (no credentials, no such bucket, access denied, a timeout,
    an unreachable server, or the library for its protocol is not installed)."""


class VariableNotFoundError(CheckpointError, KeyError):
    """The asked-for variable is not in the checkpoint (a KeyError too, so `except KeyError` works).

    `see_listing`: the checkpoint's listing shows the names that would do. Each door says how to get it
    in its own words (the CLI its `list` command, the API a Checkpoint's keys), through with_hint."""

    def __init__(self, path, problem: str, *, see_listing: bool = False):
        super().__init__(path, problem)
        self.see_listing = see_listing

    def with_hint(self, hint: str) -> "VariableNotFoundError":
        """The same error, its problem followed by `(see HINT)`; itself when it has no listing to point at."""
        if not self.see_listing:
            return self
        error = type(self).__new__(type(self))
        error.__dict__.update(self.__dict__, problem=f"{self.problem} (see {hint})", see_listing=False)
        Exception.__init__(error, error.message)
        return error


class AmbiguousNameError(VariableNotFoundError):
    """A name (a tail, an object path) that fits several variables, so none is picked."""


class InputError(InspectorError):
    """What a person typed or loaded cannot be used; `path` names the input (or its file)."""


class FilterError(InputError):
    """The filter text is not a valid regular expression; the message says where and why."""


class UsageError(InputError):
    """A command line that does not parse."""


class PlanError(InputError):
    """A remap plan that cannot be applied or read; the message lists the problems."""


class GraphEditError(PlanError):
    """The renames cannot be expressed in the TF2 object graph; the message says which object and why."""


class DestinationError(InspectorError):
    """A place to write to is refused: the source itself, its files, an existing file not to be replaced."""


class ClosedError(InspectorError, ValueError):
    """A run or checkpoint opened with the Python API (checkpoint_inspector.open) was used after close()
    or its `with` block: its readers are gone. A ValueError too, as reading a closed file is in Python."""


class TensorBoardError(InspectorError):
    """TensorBoard is missing, or could not start or serve a folder. `path` is the run folder (or the
    environment's folder when TensorBoard is not installed); `last_lines` is the tail of its log."""

    def __init__(self, path, problem: str, last_lines: list[str] | None = None):
        super().__init__(path, problem)
        self.last_lines = list(last_lines or [])
