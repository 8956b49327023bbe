"""The pieces a trajectory is made of, computed wherever an executor puts them (core.executor).

A piece is one metric of one stored tensor: its statistics, its L2 norm, or its distance to the same
variable in another checkpoint. It names where the values are (a byte range of a file or URL, or the
checkpoint and variable for a tensor only its reader can assemble), so a thread here or a Dask worker
elsewhere reads the bytes itself and sends back a few numbers. `run_pieces` is the job that hands a
set of pieces to an executor and gathers their outcomes, with progress, stopping them when cancelled.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

from ...executor import Executor, ThreadExecutor
from ...format.readers import open_reader
from ...format.bundle.tensor_ranges import TensorRange, stream_range
from ...jobs import Job, Progress
from ..numerics.blas_threads import one_blas_thread
from ..numerics.pair_norms import self_dot
from ..numerics.scratch import thread_scratch
from ..numerics.statistics import StatisticsAccumulator
from ..numerics.value_difference import aligned_chunks

CHUNK_BYTES = 256 << 10  # small enough that a chunk and its float64 copy stay in the CPU's L2 cache


@dataclass(frozen=True)
class Source:
    """Where a variable's values are: a plain tensor's byte range, else its checkpoint and name."""

    prefix: str
    name: str
    range: TensorRange | None = None

    def chunks(self, chunk_bytes: int = CHUNK_BYTES):
        if self.range is not None:
            return stream_range(self.range, chunk_bytes)
        return _chunks_of(self.prefix, self.name, chunk_bytes)


def _chunks_of(prefix: str, name: str, chunk_bytes: int):
    """The chunks of a tensor without a byte range, from a reader opened for them and closed when they
    end (or the caller stops asking)."""
    with open_reader(prefix) as reader:
        yield from reader.iter_chunks(name, chunk_bytes)


def source_of(reader, prefix: str, name: str) -> Source:
    """The variable's Source: its byte range when the reader can give one (a V2 bundle's plain tensor)."""
    return Source(prefix, name, reader.tensor_range(name))


def reader_of(readers: dict, prefix: str):
    """The reader of `prefix` kept in `readers` (a run-wide dict of open readers), opened on first use."""
    reader = readers.get(prefix)
    if reader is None:
        reader = readers[prefix] = open_reader(prefix)
    return reader


def statistics_of_chunks(chunks):
    import numpy as np

    accumulator = StatisticsAccumulator()
    for chunk in chunks:
        accumulator.add(np.abs(chunk) if chunk.dtype.kind == "c" else chunk)
    return accumulator.result()


def l2_of_chunks(chunks) -> float:
    """The L2 norm of the finite values, as the statistics give it, in one light pass."""
    import numpy as np

    total, scratch = 0.0, thread_scratch()
    with one_blas_thread():  # BLAS's dot in every process: a Dask worker's sums equal this process's
        for chunk in chunks:
            wide = scratch.get("l2", chunk.size, np.float64)  # reused: no fresh mapping per chunk
            np.copyto(wide, np.abs(chunk) if chunk.dtype.kind == "c" else chunk, casting="unsafe")
            squares = self_dot(wide)
            if not np.isfinite(squares):  # NaN or Inf in the chunk: count the finite values only
                finite = wide[np.isfinite(wide)]
                squares = self_dot(finite)
            total += squares
    return total ** 0.5


def distance_of_chunks(chunks_a, chunks_b) -> float:
    """||a - b|| over all elements, the two tensors streamed chunk by chunk side by side (chunks of equal
    bytes hold different counts of values when the two are stored in different dtypes: paired by values)."""
    import numpy as np

    total, scratch = 0.0, thread_scratch()
    with one_blas_thread():  # as in l2_of_chunks
        for a, b in aligned_chunks(iter(chunks_a), iter(chunks_b)):
            if a.dtype.kind == "c" or b.dtype.kind == "c":
                difference = np.abs(a.astype(np.complex128) - b.astype(np.complex128))
            else:  # widened into reused work arrays: no fresh mapping per chunk
                difference = scratch.get("distance_a", a.size, np.float64)
                np.copyto(difference, a, casting="unsafe")
                other_wide = scratch.get("distance_b", b.size, np.float64)
                np.copyto(other_wide, b, casting="unsafe")
                np.subtract(difference, other_wide, out=difference)
            total += self_dot(difference)
    return total ** 0.5


# The functions an executor runs: module level, so a Dask worker can import them by name.
def statistics_piece(source: Source):
    return statistics_of_chunks(source.chunks())


def l2_piece(source: Source) -> float:
    return l2_of_chunks(source.chunks())


def distance_piece(pair: tuple[Source, Source]) -> float:
    return distance_of_chunks(pair[0].chunks(), pair[1].chunks())


def call_piece(work: tuple):
    """(function, piece) -> function(piece): lets one executor run pieces of several kinds at once."""
    function, piece = work
    return function(piece)


def run_pieces(wanted: dict, executor: Executor | None, what: str, on_outcome=None) -> Job[dict]:
    """Job: {key: (function, piece)} run on the executor (threads when None); returns {key: outcome},
    an outcome being the result or the exception the piece raised. `on_outcome(key, outcome)`, if
    given, is called (in the job's thread) as each piece finishes."""
    executor = executor or ThreadExecutor()
    keys = list(wanted)
    outcomes: dict = {}
    yield Progress(0, len(keys), f"{what}: {len(keys)} pieces on {executor.name}")
    with contextlib.closing(executor.map_unordered(call_piece, [wanted[key] for key in keys])) as results:
        for index, outcome in results:
            outcomes[keys[index]] = outcome
            if on_outcome is not None:
                on_outcome(keys[index], outcome)
            yield Progress(len(outcomes), len(keys), f"{what}: {len(outcomes)} of {len(keys)} pieces")
    return outcomes
