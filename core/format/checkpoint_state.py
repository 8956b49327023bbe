"""The `checkpoint` state file of a run folder, read and written: a text-format CheckpointState proto.

    model_checkpoint_path: "ckpt-4"
    all_model_checkpoint_paths: "ckpt-3"
    all_model_checkpoint_timestamps: 1700000000.5
    last_preserved_timestamp: 1699999000.0

Paths may be relative to the folder or absolute; absolute ones name the folder the run was trained in,
often on another machine, so an absolute path is taken by its name inside the folder.
"""
from __future__ import annotations

import os
import math
import re
from dataclasses import dataclass, field

from ..errors import CorruptCheckpointError
from ..storage import files, paths

STATE_FILE_NAME = "checkpoint"
_FIELD = re.compile(r'\s*([A-Za-z_]+)\s*:\s*("(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[^\s#]+)')
_ESCAPE = re.compile(rb"\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|.)", re.DOTALL)
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


# A run saved with `max_to_keep=None` lists every checkpoint, two lines each (~90 bytes): 64 MiB is some
# 700,000 checkpoints, and a bound on what a file that is no state file can make us read.
_MAX_BYTES = 64 << 20
_PATH_LINE = 'all_model_checkpoint_paths: "'
_WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")
_TIME_LINE = "all_model_checkpoint_timestamps: "
_LATEST_TIME = 253_402_300_799.0  # 9999-12-31 23:59:59 UTC: the last second a date can print


@dataclass
class CheckpointState:
    path: str
    latest: str | None = None
    all_paths: list[str] = field(default_factory=list)
    timestamps: list[float] = field(default_factory=list)
    last_preserved_timestamp: float | None = None

    def timestamp_of(self, raw_path: str) -> float | None:
        """The save time the file gives `raw_path` (its first line); see timestamp_at."""
        try:
            return self.timestamp_at(self.all_paths.index(raw_path))
        except ValueError:
            return None

    def timestamp_at(self, number: int) -> float | None:
        """The save time of the `number`th listed path; None when none, or when it is no time a clock
        could show (TensorFlow's text format reads `1e999999` as infinity, and a year past 9999 has no
        date)."""
        if number >= len(self.timestamps):
            return None
        stamp = self.timestamps[number]
        return stamp if math.isfinite(stamp) and -_LATEST_TIME < stamp < _LATEST_TIME else None


def read_state_file(path: str) -> CheckpointState:
    """Parse a `checkpoint` file; raise CorruptCheckpointError naming it if it is not one."""
    try:
        with files.open_binary(path) as f:
            raw = f.read(_MAX_BYTES + 1)
    except OSError as exc:
        raise CorruptCheckpointError(path, f"cannot read the checkpoint state file ({exc.strerror or exc})") from None
    if len(raw) > _MAX_BYTES or b"\x00" in raw:
        raise CorruptCheckpointError(path, f"is not a checkpoint state file (binary or over {_MAX_BYTES >> 20} MiB)")
    text = raw.decode("utf-8", "surrogateescape")
    state = CheckpointState(path)
    for line_number, line in enumerate(text.splitlines(), 1):
        # The two lines a long run repeats per checkpoint, as TensorFlow writes them, taken without the
        # general parse (a quoted path with no escape in it; a number): 10,000 checkpoints are 20,000 lines.
        if line.startswith(_PATH_LINE) and len(line) > len(_PATH_LINE) and line.endswith('"') \
                and '"' not in line[len(_PATH_LINE):-1] \
                and "\\" not in line:
            state.all_paths.append(line[len(_PATH_LINE):-1])
            continue
        if line.startswith(_TIME_LINE):
            try:
                state.timestamps.append(float(line[len(_TIME_LINE):]))
                continue
            except ValueError:
                pass  # said by the general parse below
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _FIELD.match(line)
        if not match:
            raise CorruptCheckpointError(path, f"line {line_number} is not a `name: value` field: {line.strip()[:60]!r}")
        name, value = match.groups()
        if name == "model_checkpoint_path":
            state.latest = _unquote(value, path, line_number)
        elif name == "all_model_checkpoint_paths":
            state.all_paths.append(_unquote(value, path, line_number))
        elif name == "all_model_checkpoint_timestamps":
            state.timestamps.append(_number(value, path, line_number))
        elif name == "last_preserved_timestamp":
            state.last_preserved_timestamp = _number(value, path, line_number)
    return state


def resolve(raw_path: str, folder: str) -> str:
    """Where a path from the state file is in this run: relative to the folder, and an absolute one (the
    folder a TF1 Saver was given, perhaps on another machine) by its name in the folder: TensorFlow's
    checkpoints of a copied or moved run are the ones beside its state file, and the old place is never
    looked at (core.run.state_listing says when a run was moved)."""
    if not is_absolute(raw_path):
        return paths.normpath(paths.join(folder, raw_path))
    return paths.join(folder, paths.basename(raw_path.replace("\\", "/")))


def is_absolute(raw_path: str) -> bool:
    """An absolute path as any machine writes it: this one's, or Windows' (`C:\\run\\model.ckpt`,
    `\\\\server\\share\\...`), which a run trained there and copied here keeps in its state file."""
    return paths.isabs(raw_path) or bool(_WINDOWS_ABSOLUTE.match(raw_path))


def _unquote(value: str, path: str, line_number: int) -> str:
    if len(value) < 2 or value[0] not in "\"'" or value[-1] != value[0]:
        raise CorruptCheckpointError(path, f"line {line_number}: expected a quoted path")
    # Escapes stand for bytes of UTF-8 (`\303\251` is é) beside text written as it is: the body goes back to
    # its bytes, each escape becomes its byte, and the whole is decoded once.
    body = value[1:-1].encode("utf-8", "surrogateescape")

    def replace(match: re.Match) -> bytes:
        code = match.group(1).decode("latin-1")
        if code == "x":
            raise CorruptCheckpointError(path, f"line {line_number}: `\\x` without hex digits in a quoted path")
        if code[0] == "x":
            return bytes([int(code[1:], 16)])
        if code[0] in "01234567":
            if int(code, 8) > 0o377:
                raise CorruptCheckpointError(path, f"line {line_number}: octal escape `\\{code}` is not a byte")
            return bytes([int(code, 8)])
        return _SIMPLE_ESCAPES.get(code, code).encode("utf-8", "surrogateescape")

    unescaped = _ESCAPE.sub(replace, body)
    if b"\x00" in unescaped:
        raise CorruptCheckpointError(path, f"line {line_number}: a path cannot hold a NUL byte")
    return unescaped.decode("utf-8", "surrogateescape")


def _number(value: str, path: str, line_number: int) -> float:
    try:
        return float(value)
    except ValueError:
        raise CorruptCheckpointError(path, f"line {line_number}: {value!r} is not a number") from None


def write_state_file(folder: str, prefixes: list[str]) -> None:
    """A `checkpoint` state file naming `prefixes` (the last is the latest), paths relative to folder."""
    from ..atomic_write import atomic_write  # here: reading a run never writes

    names = [os.path.relpath(p, folder) for p in prefixes]
    lines = [f'model_checkpoint_path: "{_quote(names[-1])}"']
    lines += [f'all_model_checkpoint_paths: "{_quote(n)}"' for n in names]
    with atomic_write(os.path.join(folder, STATE_FILE_NAME), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
