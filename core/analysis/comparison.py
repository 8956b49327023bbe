"""What changed between two checkpoints: names only in one, the same name with another shape or dtype,
the same variable with other values (how far apart, with --values), and likely renames.

Without reading values, two bundle entries with the same size and checksum count as equal and different
checksums as different values (TensorFlow's CRC32C of the stored bytes); where a format stores no
checksum (V1, Keras, partitioned variables) the values are left unchecked. With `values`, every common
variable is streamed from both files in step, a chunk at a time (core.analysis.value_difference), so
memory stays flat and each file is read once. Kinds (weights, optimizer slots, bookkeeping) come from
core.run.variables, so a report can keep Adam's slots apart from the weights.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field

from ..format.source import CheckpointSource
from ..jobs import Job, Progress, run_to_end
from ..run.variables import VariableInfo, describe_variables
from .rename_matching import RenameMatch, Signature, match_renames
from .scratch import Scratch
from .value_difference import ValueDifference, compare_values, content_digest

COMPARING_THREADS = 2  # the machines this runs on have two cores or more; more threads only contend for memory
PARALLEL_FROM_BYTES = 1 << 20  # tensors this big are compared in the threads


@dataclass(frozen=True)
class Changed:
    name: str
    kind: str
    a: Signature
    b: Signature
    change: str                            # "shape", "dtype" or "values"
    values: ValueDifference | None = None  # the numbers, when the values were read

    def record(self) -> dict:
        record = {"name": self.name, "kind": self.kind, "change": self.change,
                  "a": {"dtype": self.a.dtype_name, "shape": list(self.a.shape)},
                  "b": {"dtype": self.b.dtype_name, "shape": list(self.b.shape)}}
        return record | (self.values.record() if self.values else {})


@dataclass
class Comparison:
    a: str
    b: str
    only_a: list[Signature] = field(default_factory=list)
    only_b: list[Signature] = field(default_factory=list)
    changed: list[Changed] = field(default_factory=list)
    equal: list[str] = field(default_factory=list)       # bit for bit (or by checksum), or within tolerance
    within_tolerance: list[str] = field(default_factory=list)  # of those, the ones not bit for bit
    unchecked: list[str] = field(default_factory=list)   # same shape and dtype, values not compared
    renames: list[RenameMatch] = field(default_factory=list)
    kinds: dict[str, str] = field(default_factory=dict)  # name -> kind, of every name on either side
    shown: dict[str, str] = field(default_factory=dict)  # name -> the name a person knows it by, where that differs
    values_read: bool = False

    @property
    def different(self) -> bool:
        return bool(self.only_a or self.only_b or self.changed)

    def record(self) -> dict:
        return {"a": self.a, "b": self.b, "only_a": [s.record() for s in self.only_a],
                "only_b": [s.record() for s in self.only_b], "changed": [c.record() for c in self.changed],
                "equal": len(self.equal), "within_tolerance": len(self.within_tolerance),
                "unchecked": len(self.unchecked), "values_read": self.values_read,
                "renames": [r.record() for r in self.renames], "shown_names": self.shown}


def signature(variable: VariableInfo) -> Signature:
    return Signature(variable.name, variable.entry.dtype_name, tuple(variable.entry.shape), variable.kind)


def compare_checkpoints(reader_a: CheckpointSource, reader_b: CheckpointSource, values: bool = False,
                        atol: float = 0.0, rtol: float = 0.0) -> Job[Comparison]:
    """Job: compare two open checkpoints (see the module docstring)."""
    yield Progress(0, 0, "Listing both checkpoints")
    variables_a = {v.name: v for v in describe_variables(reader_a)}
    variables_b = {v.name: v for v in describe_variables(reader_b)}
    result = Comparison(reader_a.prefix, reader_b.prefix, values_read=values)
    result.kinds = {name: v.kind for name, v in variables_b.items()} | {name: v.kind for name, v in variables_a.items()}
    result.shown = {name: v.display_name for side in (variables_b, variables_a) for name, v in side.items()
                    if v.display_name != name}
    result.only_a = [signature(v) for name, v in variables_a.items() if name not in variables_b]
    result.only_b = [signature(v) for name, v in variables_b.items() if name not in variables_a]
    common = [(variables_a[name], variables_b[name]) for name in variables_a if name in variables_b]
    same_kind = [(a, b) for a, b in common if tuple(a.entry.shape) == tuple(b.entry.shape)
                 and a.entry.dtype_name == b.entry.dtype_name]
    total_bytes = sum(a.entry.nbytes + b.entry.nbytes for a, b in same_kind) if values else len(common)
    differences = (yield from _differences(reader_a, reader_b, same_kind, atol, rtol, total_bytes)) if values else {}
    for a, b in common:
        sig_a, sig_b = signature(a), signature(b)
        if sig_a.shape != sig_b.shape or sig_a.dtype_name != sig_b.dtype_name:
            change = "shape" if sig_a.shape != sig_b.shape else "dtype"
            result.changed.append(Changed(a.name, a.kind, sig_a, sig_b, change))
        elif values:
            _place(result, a, sig_a, sig_b, differences[a.name])
        else:
            _compare_checksums(result, reader_a, reader_b, a, sig_a, sig_b)
    yield Progress(total_bytes, total_bytes, "Looking for renamed variables")
    result.renames = (yield from _renames(reader_a, reader_b, result)).matches
    yield Progress(total_bytes, total_bytes, "Done")
    return result


def _differences(reader_a, reader_b, pairs: list, atol: float, rtol: float, total_bytes: int):
    """Job: {name: ValueDifference} of every pair. Where both checkpoints have byte ranges (V2 bundles,
    whose shards threads read by position: core.format.bundle.data_shards) the big tensors go to two
    threads, as numpy, the CRC and file reads let go of the GIL for long stretches; small ones are mostly Python and run in this thread (two threads trading the GIL
    at every small step were slower than one). Cancelling stops the threads between two chunks."""
    parallel = reader_a.kind.has_byte_ranges and reader_b.kind.has_byte_ranges
    big = [(a, b) for a, b in pairs if parallel and a.entry.nbytes >= PARALLEL_FROM_BYTES]
    small = [(a, b) for a, b in pairs if not parallel or a.entry.nbytes < PARALLEL_FROM_BYTES]
    out, done = {}, 0
    if len(big) > 1:
        done = yield from _in_threads(reader_a, reader_b, big, atol, rtol, total_bytes, out)
    else:
        small = big + small
    scratch = Scratch()
    for a, b in small:
        yield Progress(done, total_bytes, f"Comparing {a.name}")
        out[a.name] = yield from compare_values(reader_a, reader_b, a.entry, b.entry, atol, rtol, scratch=scratch)
        done += a.entry.nbytes + b.entry.nbytes
    return out


def _in_threads(reader_a, reader_b, pairs: list, atol: float, rtol: float, total_bytes: int, out: dict):
    """Job: the pairs compared by COMPARING_THREADS threads into `out`; returns the bytes compared."""
    stop, local = threading.Event(), threading.local()

    def one(a, b):
        if not hasattr(local, "scratch"):
            local.scratch = Scratch()
        return run_to_end(compare_values(reader_a, reader_b, a.entry, b.entry, atol, rtol, scratch=local.scratch),
                          should_cancel=stop.is_set)

    pool = ThreadPoolExecutor(COMPARING_THREADS, thread_name_prefix="compare")
    done = 0
    try:
        futures = [(a, b, pool.submit(one, a, b)) for a, b in pairs]
        for a, b, future in futures:
            while True:
                try:
                    out[a.name] = future.result(timeout=0.2)
                    break
                except FutureTimeout:
                    yield Progress(done, total_bytes, f"Comparing {a.name}")
            done += a.entry.nbytes + b.entry.nbytes
            yield Progress(done, total_bytes, f"Compared {a.name}")
    finally:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
    return done


def _place(result: Comparison, a: VariableInfo, sig_a: Signature, sig_b: Signature, difference: ValueDifference):
    if difference.status == "different":
        result.changed.append(Changed(a.name, a.kind, sig_a, sig_b, "values", difference))
        return
    result.equal.append(a.name)
    if difference.status == "close":
        result.within_tolerance.append(a.name)


def _compare_checksums(result: Comparison, reader_a, reader_b, a: VariableInfo, sig_a: Signature, sig_b: Signature):
    digest_a = content_digest(reader_a, a.entry, read=False)
    digest_b = content_digest(reader_b, reader_b.entry(a.name), read=False)
    if digest_a is None or digest_b is None:
        result.unchecked.append(a.name)
    elif digest_a == digest_b:
        result.equal.append(a.name)
    else:
        result.changed.append(Changed(a.name, a.kind, sig_a, sig_b, "values"))


def _renames(reader_a, reader_b, result: Comparison):
    """Likely renames among the names only on one side; values are hashed only where two candidates
    of one shape and dtype need telling apart."""
    shapes_b = {(s.shape, s.dtype_name) for s in result.only_b}
    candidates_a = [s for s in result.only_a if (s.shape, s.dtype_name) in shapes_b]
    shapes_a = {(s.shape, s.dtype_name) for s in candidates_a}
    candidates_b = [s for s in result.only_b if (s.shape, s.dtype_name) in shapes_a]
    digests = {}
    for side, reader, items in ((0, reader_a, candidates_a), (1, reader_b, candidates_b)):
        for sig in items:
            yield Progress(0, 0, f"Hashing {sig.name}")
            digests[(side, sig.name)] = content_digest(reader, reader.entry(sig.name), read=True)
    return match_renames(candidates_a, candidates_b, digests)
