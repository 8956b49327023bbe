"""Which variable on one side is which on the other when names differ: the likely renames a diff shows
and a restore check turns into a plan.

Candidates must agree in shape (and dtype, unless a cast is allowed). Evidence, strongest first:
- "content": the only pair of candidates whose values are byte for byte the same;
- "shape": the only candidate of its shape and dtype on each side;
- "name": the most similar names (scope parts and characters), clearly ahead of the runner-up;
- "order": the same position among candidates of one shape whose leaf names line up (`.../kernel` with
  `.../kernel`), as when every layer of a model was renamed.
Nothing is guessed: candidates no evidence separates are left for the person, listed as ambiguous.
"""
from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from ...format.checkpoint_keys import object_path_of_key

MAX_SCORED_PAIRS = 10_000  # name similarity is quadratic in a group (and picked pair by pair): past this, order only
CLEAR_LEAD = 0.05           # a best name match must beat the runner-up by this much


@dataclass(frozen=True)
class Signature:
    """What one side holds (or expects) under one name."""

    name: str
    dtype_name: str
    shape: tuple[int, ...] | None
    kind: str = "variable"

    def record(self) -> dict:
        return {"name": self.name, "dtype": self.dtype_name, "shape": None if self.shape is None else list(self.shape),
                "kind": self.kind}


@dataclass(frozen=True)
class RenameMatch:
    old: str                 # the name on the first side (A, or the checkpoint being checked)
    new: str                 # the name on the other side (B, or what the target expects)
    evidence: str            # "content", "shape", "name" or "order"
    detail: str
    cast_to: str | None = None  # the other side's dtype, when the two differ

    def record(self) -> dict:
        record = {"a": self.old, "b": self.new, "evidence": self.evidence, "detail": self.detail}
        return record | ({"cast_to": self.cast_to} if self.cast_to else {})


@dataclass
class Matching:
    matches: list[RenameMatch]
    ambiguous: list[str]     # why candidates were left unmatched


def match_renames(olds: list[Signature], news: list[Signature], digests: dict[tuple[int, str], object] | None = None,
                  allow_cast: bool = False) -> Matching:
    """Pair names of `olds` with names of `news`. `digests` maps (0, old name) / (1, new name) to a digest
    of the values where known. With `allow_cast`, leftovers of one shape but another dtype pair too."""
    result = Matching([], [])
    left_old, left_new = list(olds), list(news)
    for by_dtype in (True, False) if allow_cast else (True,):
        groups: dict[tuple, tuple[list[Signature], list[Signature]]] = {}
        for side, items in ((0, left_old), (1, left_new)):
            for sig in items:
                if sig.shape is None:
                    continue
                key = (sig.shape, sig.dtype_name if by_dtype else "")
                groups.setdefault(key, ([], []))[side].append(sig)
        for (shape, _), (group_old, group_new) in groups.items():
            if group_old and group_new:
                _match_group(group_old, group_new, digests or {}, shape, result)
        paired_old = {m.old for m in result.matches}
        paired_new = {m.new for m in result.matches}
        left_old = [s for s in left_old if s.name not in paired_old]
        left_new = [s for s in left_new if s.name not in paired_new]
    old_dtype = {s.name: s.dtype_name for s in olds}
    new_dtype = {s.name: s.dtype_name for s in news}
    result.matches = [m if old_dtype[m.old] == new_dtype[m.new] else
                      RenameMatch(m.old, m.new, m.evidence, m.detail, new_dtype[m.new]) for m in result.matches]
    return result


def _match_group(olds: list[Signature], news: list[Signature], digests: dict, shape, result: Matching) -> None:
    where = f"shape {list(shape)}"
    olds, news = list(olds), list(news)

    def take(old: Signature, new: Signature, evidence: str, detail: str) -> None:
        result.matches.append(RenameMatch(old.name, new.name, evidence, detail))
        olds.remove(old)
        news.remove(new)

    by_digest: dict[object, tuple[list[Signature], list[Signature]]] = {}
    for side, items in ((0, olds), (1, news)):
        for sig in items:
            digest = digests.get((side, sig.name))
            if digest is not None:
                by_digest.setdefault(digest, ([], []))[side].append(sig)
    for same_old, same_new in by_digest.values():
        if len(same_old) == 1 and len(same_new) == 1:
            take(same_old[0], same_new[0], "content", "the same values, byte for byte")
    if len(olds) == 1 and len(news) == 1:
        take(olds[0], news[0], "shape", f"the only unmatched {where} on each side")
        return
    if olds and news and len(olds) * len(news) <= MAX_SCORED_PAIRS:
        _match_by_name(olds, news, take, where)
    if olds and len(olds) == len(news):
        old_sorted = sorted(olds, key=lambda s: s.name)
        new_sorted = sorted(news, key=lambda s: s.name)
        if [_leaf(s.name) for s in old_sorted] == [_leaf(s.name) for s in new_sorted]:
            for position, (old, new) in enumerate(zip(old_sorted, new_sorted)):
                take(old, new, "order", f"position {position + 1} of {len(old_sorted)} “{_leaf(old.name)}” of {where}")
    if olds and news:
        result.ambiguous.append(f"{len(olds)} unmatched of {where} on one side and {len(news)} on the other; no "
                                f"evidence tells them apart ({', '.join(s.name for s in olds[:3])}"
                                f"{', ...' if len(olds) > 3 else ''})")


def _match_by_name(olds: list[Signature], news: list[Signature], take, where: str) -> None:
    scores = {(o.name, n.name): name_similarity(o.name, n.name) for o in olds for n in news}
    old_by_name, new_by_name = {s.name: s for s in olds}, {s.name: s for s in news}
    while scores:
        (old_name, new_name), score = max(scores.items(), key=lambda item: item[1])
        rivals = [s for (o, n), s in scores.items() if (o == old_name) != (n == new_name)]
        if rivals and score - max(rivals) < CLEAR_LEAD:
            return
        take(old_by_name[old_name], new_by_name[new_name], "name", f"the most similar name of {where} (similarity {score:.2f})")
        scores = {pair: s for pair, s in scores.items() if pair[0] != old_name and pair[1] != new_name}


def name_similarity(a: str, b: str) -> float:
    """0..1: half how many scope parts agree in order, half how many characters do."""
    path_a, path_b = object_path_of_key(a), object_path_of_key(b)
    parts = SequenceMatcher(None, path_a.split("/"), path_b.split("/"), autojunk=False).ratio()
    chars = SequenceMatcher(None, path_a, path_b, autojunk=False).ratio()
    return (parts + chars) / 2


def _leaf(name: str) -> str:
    return object_path_of_key(name).rsplit("/", 1)[-1]
