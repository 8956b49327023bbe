"""The `checkpoint` state file of a run folder, read and written: a text-format CheckpointState proto.

    model_checkpoint_path: "ckpt-4"
    all_model_checkpoint_paths: "ckpt-3"
    all_model_checkpoint_timestamps: 1700000000.5
    last_preserved_timestamp: 1699999000.0

Paths may be relative to the folder or absolute; absolute ones often name the machine the run was
trained on, so resolution falls back to the same basename inside the folder.
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
_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|.)")
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


_LATEST_TIME = 253_402_300_799.0  # 9999-12-31 23:59:59 UTC: the last second a date can print


@dataclass
class CheckpointState:
    path: str
    latest: str | None = None
    all_paths: list[str] = field(default_factory=list)
    timestamps: list[float] = field(default_factory=list)
    last_preserved_timestamp: float | None = None

    def timestamp_of(self, raw_path: str) -> float | None:
        """The save time the file gives `raw_path`; None when none, or when it is no time a clock could
        show (TensorFlow's text format reads `1e999999` as infinity, and a year past 9999 has no date)."""
        try:
            stamp = self.timestamps[self.all_paths.index(raw_path)]
        except (ValueError, IndexError):
            return None
        return stamp if math.isfinite(stamp) and -_LATEST_TIME < stamp < _LATEST_TIME else None


def read_state_file(path: str) -> CheckpointState:
    """Parse a `checkpoint` file; raise CorruptCheckpointError naming it if it is not one."""
    try:
        with files.open_binary(path) as f:
            raw = f.read((1 << 20) + 1)
    except OSError as exc:
        raise CorruptCheckpointError(path, f"cannot read the checkpoint state file ({exc.strerror or exc})") from None
    if len(raw) > 1 << 20 or b"\x00" in raw:
        raise CorruptCheckpointError(path, "is not a checkpoint state file (binary or over 1 MiB)")
    text = raw.decode("utf-8", "surrogateescape")
    state = CheckpointState(path)
    for line_number, line in enumerate(text.splitlines(), 1):
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
    """Where a path from the state file is on this machine: relative to the folder, as written if it
    exists, else the same basename inside the folder (a run copied from another machine)."""
    if not paths.isabs(raw_path):
        return paths.normpath(paths.join(folder, raw_path))
    if paths.is_url(raw_path) == paths.is_url(folder) and files.exists(raw_path + ".index"):
        return paths.normpath(raw_path)
    return paths.join(folder, paths.basename(raw_path.replace("\\", "/")))


def resolved_timestamps(state: CheckpointState, folder: str) -> dict[str, float | None]:
    """Each prefix the state file lists, resolved in the folder, with its time there (the last line naming
    a prefix wins): one resolve per line, however many checkpoints then look their time up."""
    return {resolve(raw, folder): state.timestamp_of(raw) for raw in state.all_paths}


def _unquote(value: str, path: str, line_number: int) -> str:
    if len(value) < 2 or value[0] not in "\"'" or value[-1] != value[0]:
        raise CorruptCheckpointError(path, f"line {line_number}: expected a quoted path")
    body = value[1:-1]

    def replace(match: re.Match) -> str:
        code = match.group(1)
        if code == "x":
            raise CorruptCheckpointError(path, f"line {line_number}: `\\x` without hex digits in a quoted path")
        if code[0] == "x":
            return chr(int(code[1:], 16))
        if code[0] in "01234567":
            if int(code, 8) > 0o377:
                raise CorruptCheckpointError(path, f"line {line_number}: octal escape `\\{code}` is not a byte")
            return chr(int(code, 8))
        return _SIMPLE_ESCAPES.get(code, code)

    # Octal and hex escapes are bytes of UTF-8: rebuild the bytes, then decode them.
    unescaped = _ESCAPE.sub(replace, body)
    if "\x00" in unescaped:
        raise CorruptCheckpointError(path, f"line {line_number}: a path cannot hold a NUL byte")
    try:
        return unescaped.encode("latin-1", "surrogateescape").decode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return unescaped  # already text (non-Latin-1 characters written unescaped)


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
