"""Variable tables as CSV: one checkpoint's variables (optionally with statistics), or a whole run's
(one row per variable per checkpoint); and `write_csv`, the way every CSV here is written: UTF-8, a
header row, the csv module's quoting (odd variable names survive), atomically (core.atomic_write).

Exports are jobs (core.jobs): they report progress and can be cancelled, and a cancelled or failed
export leaves nothing behind.
"""
from __future__ import annotations

import csv
from typing import Iterable

from ..analysis.numerics.statistics import StatisticsAccumulator
from ..atomic_write import atomic_write
from ..executor import Executor
from ..format.source import CheckpointSource, readers_owned
from ..formatting import format_shape
from ..jobs import Job, Progress
from ..run.discovery import CheckpointInfo
from ..run.variables import VariableInfo, describe_variables
from .run_statistics import run_statistics

TABLE_COLUMNS = ["name", "friendly_path", "dtype", "shape", "elements", "bytes", "kind"]
STAT_COLUMNS = ["min", "max", "mean", "std", "l2", "zero_fraction", "nan_count", "inf_count"]
CHUNK_BYTES = 8 << 20


def write_csv(path: str, header: list[str], rows) -> None:
    # A stored key that is not UTF-8 (its bytes kept as surrogates) is written with those bytes escaped
    # (`\udcff`), as the CLI prints it: one rule for every text we write (core.export.tensors.text_name).
    # A missing folder is made, as Save As makes one (core.atomic_write.new_folders): `export-csv`, the
    # commands' --csv and the window's exports write through here.
    with atomic_write(path, "w", make_folders=True, newline="", encoding="utf-8", errors="backslashreplace") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


def table_row(info: VariableInfo) -> list:
    entry = info.entry
    return [info.name, info.display_name if info.display_name != info.name else "", entry.dtype_name,
            format_shape(entry.shape), entry.num_elements, entry.nbytes, info.kind]


def export_variable_table(reader: CheckpointSource, path: str, names: Iterable[str] | None = None,
                          with_statistics: bool = False) -> Job[int]:
    """Job: one row per variable (all, or just `names`, e.g. the filtered ones); returns the row count."""
    variables = describe_variables(reader)
    if names is not None:
        wanted = set(names)
        variables = [v for v in variables if v.name in wanted]
    rows = []
    for done, info in enumerate(variables):
        row = table_row(info)
        if with_statistics:
            yield Progress(done, len(variables), f"Statistics of {info.name}")
            row += _statistics_cells(reader, info)
        rows.append(row)
    write_csv(path, TABLE_COLUMNS + (STAT_COLUMNS if with_statistics else []), rows)
    yield Progress(len(variables), len(variables), f"Wrote {path}")
    return len(rows)


def export_run_table(checkpoints: list[CheckpointInfo], path: str, with_statistics: bool = False,
                     executor: Executor | None = None) -> Job[int]:
    """Job: one row per variable per checkpoint, with the checkpoint's step and prefix first; with
    statistics, those of every variable at every checkpoint, computed as the whole-run jobs compute them
    (core.export.run_statistics: pieces on `executor`, threads by default or a Dask cluster's workers)."""
    rows = []
    with readers_owned(None) as readers:  # every checkpoint's, closed when the table is made or fails
        for done, info in enumerate(checkpoints):
            yield Progress(done, len(checkpoints), f"Listing {info.name}")
            readers[info.prefix] = info.open_reader()
        statistics = (yield from run_statistics(checkpoints, readers, executor)) if with_statistics else {}
        for info in checkpoints:
            for variable in describe_variables(readers[info.prefix]):
                row = ["" if info.step is None else info.step, info.prefix] + table_row(variable)
                if with_statistics:
                    row += statistics_cells(statistics.get((info.prefix, variable.name)))
                rows.append(row)
    write_csv(path, ["step", "prefix"] + TABLE_COLUMNS + (STAT_COLUMNS if with_statistics else []), rows)
    yield Progress(len(checkpoints), len(checkpoints), f"Wrote {path}")
    return len(rows)


def statistics_cells(stats) -> list:
    """The STAT_COLUMNS of a Statistics (empty cells for none: not numbers, or not readable)."""
    if stats is None:
        return [""] * len(STAT_COLUMNS)
    return ["" if getattr(stats, c) is None else repr(getattr(stats, c)) for c in STAT_COLUMNS]


def _statistics_cells(reader: CheckpointSource, info: VariableInfo) -> list:
    import numpy as np

    if not info.entry.is_numeric:
        return [""] * len(STAT_COLUMNS)
    accumulator = StatisticsAccumulator()
    for chunk in reader.iter_chunks(info.name, CHUNK_BYTES):
        accumulator.add(np.abs(chunk) if chunk.dtype.kind == "c" else chunk)
    return statistics_cells(accumulator.result())
