"""What changed between two checkpoints: names only in one, the same name with another shape or dtype,
the same variable with other values (how far apart, with --values), likely renames, and variables stored
under the same key that the object graph names otherwise (a renamed Keras layer in a TF2 checkpoint).

Without reading values, two bundle entries with the same size and checksum count as equal and different
checksums as different values (TensorFlow's CRC32C of the stored bytes); where a format stores no
checksum (V1, Keras, partitioned variables) the values are left unchecked. With `values`, every common
variable is streamed from both files in step, a chunk at a time (core.analysis.numerics.value_difference), so
memory stays flat and each file is read once; small tensors are read and measured a group at a time
(core.analysis.comparison.value_difference_groups), to the same figures. Kinds (weights, optimizer slots,
bookkeeping) come from core.run.variables, so a report can keep Adam's slots apart from the weights.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field

from ...errors import CheckpointError
from ...executor import Executor
from ...format.source import CheckpointSource
from ...jobs import Job, Progress, run_to_end
from ...run.variables import VariableInfo, describe_variables, model_order_key
from .rename_matching import RenameMatch, Signature, match_renames
from ..numerics.scratch import thread_scratch
from ..numerics.value_difference import ValueDifference, compare_values, content_digest
from .value_difference_groups import difference_on_worker, difference_piece, plan_differences

COMPARING_THREADS = 2  # the machines this runs on have two cores or more; more threads only contend for memory


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


@dataclass(frozen=True)
class ShownRename:
    """A variable stored under the same key on both sides that a person knows by another name on each: a
    TF2 checkpoint whose object graph names the variable otherwise (a Keras layer renamed, same position)."""

    name: str  # the stored key
    a: str     # the name shown in A
    b: str     # the name shown in B
    signature: Signature  # in A (B's may differ in shape or dtype too: then it is also among `changed`)

    def record(self) -> dict:
        return {"name": self.name, "a": self.a, "b": self.b}


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
    shown_renames: list[ShownRename] = field(default_factory=list)  # same key, another name shown
    kinds: dict[str, str] = field(default_factory=dict)  # name -> kind, of every name on either side
    shown: dict[str, str] = field(default_factory=dict)  # name -> the name a person knows it by, where that differs
    values_read: bool = False

    @property
    def different(self) -> bool:
        return bool(self.only_a or self.only_b or self.changed or self.shown_renames)

    def record(self) -> dict:
        return {"a": self.a, "b": self.b, "only_a": [s.record() for s in self.only_a],
                "only_b": [s.record() for s in self.only_b], "changed": [c.record() for c in self.changed],
                "equal": len(self.equal), "within_tolerance": len(self.within_tolerance),
                "unchecked": len(self.unchecked), "values_read": self.values_read,
                "renames": [r.record() for r in self.renames],
                "shown_renames": [r.record() for r in self.shown_renames], "shown_names": self.shown}


def signature(variable: VariableInfo) -> Signature:
    return Signature(variable.name, variable.entry.dtype_name, tuple(variable.entry.shape), variable.kind)


def compare_checkpoints(reader_a: CheckpointSource, reader_b: CheckpointSource, values: bool = False,
                        atol: float = 0.0, rtol: float = 0.0, executor: Executor | None = None) -> Job[Comparison]:
    """Job: compare two open checkpoints (see the module docstring). With `values` and a Dask cluster as
    `executor`, the values are compared by its workers (each reads its tensors' byte ranges itself)."""
    yield Progress(0, 0, "Listing both checkpoints")
    variables_a = {v.name: v for v in describe_variables(reader_a)}
    variables_b = {v.name: v for v in describe_variables(reader_b)}
    common = [(variables_a[name], variables_b[name]) for name in variables_a if name in variables_b]
    same_kind = [(a, b) for a, b in common if tuple(a.entry.shape) == tuple(b.entry.shape)
                 and a.entry.dtype_name == b.entry.dtype_name]
    total_bytes = sum(a.entry.nbytes + b.entry.nbytes for a, b in same_kind) if values else len(common)
    # the values are compared on threads from here on, while this thread does the bookkeeping
    comparing = _ValuesCompared(reader_a, reader_b, same_kind, atol, rtol, executor) if values else None
    try:
        result = Comparison(reader_a.prefix, reader_b.prefix, values_read=values)
        result.kinds = ({name: v.kind for name, v in variables_b.items()}
                        | {name: v.kind for name, v in variables_a.items()})
        result.shown = {name: v.display_name for side in (variables_b, variables_a) for name, v in side.items()
                        if v.display_name != name}
        result.shown_renames = [ShownRename(a.name, a.display_name, b.display_name, signature(a)) for a, b in common
                                if a.display_name != b.display_name]
        result.only_a = [signature(v) for name, v in variables_a.items() if name not in variables_b]
        result.only_b = [signature(v) for name, v in variables_b.items() if name not in variables_a]
        signed = [(a, b, signature(a), signature(b)) for a, b in common]
        differences = (yield from comparing.gathered(total_bytes)) if comparing else {}
    finally:
        if comparing:
            comparing.close()
    for a, b, sig_a, sig_b in signed:
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


class _ValuesCompared:
    """The ValueDifference of every pair, started when made. Where both checkpoints give byte ranges (V2
    bundles, whose shards threads read by position: core.format.bundle.data_shards), small tensors are
    compared by groups (core.analysis.comparison.value_difference_groups: each group's stretch of both files read
    once, all its tensors measured at once) and the others streamed a chunk at a time, all on
    COMPARING_THREADS threads, as numpy, the CRC and file reads let go of the GIL. The rest (other
    formats, strings, partitioned variables, the tensors of a group that met damage) are compared one by
    one by `gathered`, in the caller's thread, where a damaged tensor raises an error that names it.
    Cancelling stops the threads between two chunks."""

    def __init__(self, reader_a, reader_b, pairs: list, atol: float, rtol: float, executor: Executor | None = None):
        self.reader_a, self.reader_b, self.pairs, self.atol, self.rtol = reader_a, reader_b, pairs, atol, rtol
        self.stop = threading.Event()
        self.pool = None
        self.futures: list = []  # (name, or None for a group; what progress calls it; its bytes; the future)
        self.on_cluster = None   # a Dask cluster's: (the pieces as futures list them, the outcomes as they come)
        if not (reader_a.kind.has_byte_ranges and reader_b.kind.has_byte_ranges):
            return
        names = [a.name for a, _ in pairs]
        ranges_a, ranges_b = reader_a.tensor_ranges(names), reader_b.tensor_ranges(names)
        cluster = executor is not None and not executor.in_process
        works = plan_differences(ranges_a, ranges_b, names, atol, rtol,
                                 executor.worker_count() if cluster else COMPARING_THREADS)
        grouped = {name for work in works for name in work.names}
        streamed = [(a, b) for a, b in pairs if a.name not in grouped and a.name in ranges_a and a.name in ranges_b]
        if not works and not streamed:
            return
        if cluster:  # the same pieces as the threads', each read and measured by a worker
            pieces = [(a.name, a.name, a.entry.nbytes + b.entry.nbytes,
                       ("pair", (ranges_a[a.name], ranges_b[a.name], atol, rtol))) for a, b in streamed]
            pieces += [(None, f"{len(work.names)} small variables", work.nbytes, ("group", work)) for work in works]
            self.on_cluster = (pieces, executor.map_unordered(difference_on_worker, [p[3] for p in pieces]))
            return
        self.pool = ThreadPoolExecutor(COMPARING_THREADS, thread_name_prefix="compare")
        # Biggest first and the quick groups last, so neither thread is left alone with a big tensor at the end.
        for a, b in sorted(streamed, key=lambda pair: pair[0].entry.nbytes, reverse=True):
            self.futures.append((a.name, a.name, a.entry.nbytes + b.entry.nbytes, self.pool.submit(self._one, a, b)))
        for work in works:
            self.futures.append((None, f"{len(work.names)} small variables", work.nbytes,
                                 self.pool.submit(self._group, work)))

    def _one(self, a, b):
        try:
            return run_to_end(compare_values(self.reader_a, self.reader_b, a.entry, b.entry, self.atol, self.rtol,
                                             scratch=thread_scratch()), should_cancel=self.stop.is_set)
        except CheckpointError:  # damage: compared again one by one (gathered), as a cluster's failed pieces are
            return None

    @staticmethod
    def _group(work):
        try:
            return difference_piece(work)
        except Exception:  # noqa: BLE001 - damage: its tensors go one by one, where the message names the tensor
            return None

    def gathered(self, total_bytes: int):
        """Job: {name: ValueDifference} of every pair."""
        out, done = {}, 0
        if self.on_cluster is not None:
            pieces, outcomes = self.on_cluster
            for index, outcome in outcomes:
                name, label, nbytes, _ = pieces[index]
                if not isinstance(outcome, BaseException):  # else damage: compared one by one below, named
                    out.update({name: outcome} if name is not None else outcome)
                done += nbytes
                yield Progress(done, total_bytes, f"Compared {label}")
        for name, label, nbytes, future in self.futures:
            while True:
                try:
                    found = future.result(timeout=0.2)
                    break
                except FutureTimeout:
                    yield Progress(done, total_bytes, f"Comparing {label}")
            if name is not None:
                if found is not None:
                    out[name] = found
            elif found is not None:  # a group's {name: ValueDifference}; None when it met damage
                out.update(found)
            done += nbytes
            yield Progress(done, total_bytes, f"Compared {label}")
        self.close()
        scratch = thread_scratch()
        # What is left (other formats, and any piece that met damage, on threads or a cluster alike) one by one,
        # the model's weights first, in model order: the first damaged one there is named, whoever compared the rest.
        for a, b in sorted(self.pairs, key=lambda pair: (pair[0].kind != "variable",
                                                          model_order_key(pair[0].display_name))):
            if a.name in out:
                continue
            yield Progress(done, total_bytes, f"Comparing {a.name}")
            out[a.name] = yield from compare_values(self.reader_a, self.reader_b, a.entry, b.entry, self.atol,
                                                    self.rtol, scratch=scratch)
            done += a.entry.nbytes + b.entry.nbytes
        return out

    def close(self) -> None:
        """Stop the threads (between two chunks) and wait for them; safe to call twice."""
        self.stop.set()
        if self.on_cluster is not None:
            self.on_cluster[1].close()  # cancels the pieces not done
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None


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
