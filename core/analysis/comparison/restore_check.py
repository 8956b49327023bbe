"""Will this checkpoint restore into that program? What TensorFlow would say on restore, said before it.

The target tells what the restoring program asks for (RestoreTarget):
- a TF1 `.meta` file: the keys, dtypes and shapes its Saver restores (core.format.graph.meta_graph), which
  `import_meta_graph` + `Saver.restore` ask for by name;
- a SavedModel: its variables bundle, the keys and object graph TensorFlow wrote for it (a TF1
  SavedModel without one: its graph's Saver);
- another checkpoint or run (a template written by the new code): its latest checkpoint's keys;
- a Keras file: its weights, for a Keras file to be checked against.
Keys are compared as TensorFlow compares them: a TF1 Saver looks each key up by name, a TF2 restore walks
the object graph whose paths the keys spell. The check lists `missing` (asked for, not there: restore
fails, or for TF2 silently leaves the variable as it was), `mismatched` (there, with another shape or
dtype: restore fails) and `unexpected` (there, not asked for: harmless, listed). Compatible means nothing
missing and nothing mismatched. The fix plan is core.edit.fix_plan's.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from ...errors import InputError
from ...format.checkpoint_keys import OBJECT_GRAPH_KEY, VARIABLE_VALUE_SUFFIX
from ...format.readers import KERAS, format_of
from ...format.graph.meta_graph import read_meta_graph, read_saved_model_graph
from ...run.loading import checkpoint_at
from ...run.variables import VariableInfo, describe_variables, kind_of_name
from .comparison import signature
from .rename_matching import Signature

SAVED_MODEL_FILE = "saved_model.pb"
SAVE_COUNTER_KEY = "save_counter" + VARIABLE_VALUE_SUFFIX


@dataclass
class RestoreTarget:
    path: str
    kind: str                 # "meta", "saved_model", "checkpoint" or "keras"
    description: str          # "the Saver of graph.meta", for a report's first line
    expected: list[Signature]
    prefix: str | None = None  # the template checkpoint, when the target is one (a SavedModel's variables)


@dataclass(frozen=True)
class Mismatch:
    name: str
    kind: str
    expected: Signature
    found: Signature

    def record(self) -> dict:
        return {"name": self.name, "kind": self.kind,
                "expected": {"dtype": self.expected.dtype_name, "shape": _shape(self.expected)},
                "found": {"dtype": self.found.dtype_name, "shape": _shape(self.found)}}


@dataclass
class RestoreCheck:
    checkpoint: str
    target: RestoreTarget
    missing: list[Signature] = field(default_factory=list)
    unexpected: list[Signature] = field(default_factory=list)
    mismatched: list[Mismatch] = field(default_factory=list)
    matched: list[str] = field(default_factory=list)

    @property
    def compatible(self) -> bool:
        return not self.missing and not self.mismatched

    def record(self) -> dict:
        return {"checkpoint": self.checkpoint, "target": self.target.path, "target_kind": self.target.kind,
                "compatible": self.compatible, "missing": [s.record() for s in self.missing],
                "unexpected": [s.record() for s in self.unexpected],
                "mismatched": [m.record() for m in self.mismatched], "matched": len(self.matched)}


def read_target(path: str) -> RestoreTarget:
    """What the program behind `path` expects a checkpoint to hold (see the module docstring)."""
    path = os.fspath(path)
    if os.path.isfile(path) and path.endswith(".meta"):
        graph = read_meta_graph(path)
        return _graph_target(path, "meta", graph, f"the Saver of {os.path.basename(path)}")
    folder = os.path.dirname(path) if os.path.basename(path) == SAVED_MODEL_FILE else path
    saved_model = os.path.join(folder, SAVED_MODEL_FILE)
    if os.path.isdir(folder) and os.path.isfile(saved_model):
        if os.path.exists(os.path.join(folder, "variables", "variables.index")):
            return _checkpoint_target(folder, "saved_model", f"the SavedModel {os.path.basename(folder)}")
        graph = read_saved_model_graph(saved_model)
        return _graph_target(folder, "saved_model", graph, f"the Saver of the SavedModel {os.path.basename(folder)}")
    return _checkpoint_target(path, None, "")


def _graph_target(path: str, kind: str, graph, description: str) -> RestoreTarget:
    names = {t.name for t in graph.expected}
    expected = [Signature(t.name, t.dtype_name, t.shape, kind_of_name(t.name, names)[0]) for t in graph.expected]
    if graph.saver_scope is None:
        description += " (the graph has no Saver: its variables by their own names)"
    return RestoreTarget(path, kind, description, expected)


def _checkpoint_target(path: str, kind: str | None, description: str) -> RestoreTarget:
    """A checkpoint, run, SavedModel or Keras file as the target: what its (latest) checkpoint holds."""
    checkpoint, reader = checkpoint_at(path)
    if kind is None:
        kind = "keras" if reader.kind.is_keras else "checkpoint"
        description = f"the {kind} {os.path.basename(checkpoint.prefix)}"
    try:
        # The object graph is read, not restored; a save counter is made by the restoring Checkpoint
        # itself where the checkpoint has none (Checkpoint.write saves none): neither is asked for.
        expected = [signature(v) for v in describe_variables(reader) if v.name not in (OBJECT_GRAPH_KEY, SAVE_COUNTER_KEY)]
    finally:
        reader.close()  # opened here for this listing alone (a Keras file's HDF5 handle, a bundle's shards)
    return RestoreTarget(path, kind, description, expected, checkpoint.prefix)


def check_restore(prefix: str, found: list[VariableInfo], target: RestoreTarget) -> RestoreCheck:
    """Compare what a checkpoint holds (`found`, its described variables) with what `target` expects."""
    keras_checkpoint = format_of(prefix) is KERAS
    if (target.kind == "keras") != keras_checkpoint:
        target_is = "a Keras file" if target.kind == "keras" else "a TensorFlow program's expectations"
        checkpoint_is = "a Keras file" if keras_checkpoint else "a TensorFlow checkpoint"
        raise InputError(target.path, f"is {target_is} and {prefix} {checkpoint_is}: the two name weights "
                                      f"differently; convert one into the other's kind first (the `convert` command)")
    report = RestoreCheck(prefix, target)
    held = {v.name: signature(v) for v in found if v.name != OBJECT_GRAPH_KEY}
    for want in target.expected:
        have = held.get(want.name)
        if have is None:
            report.missing.append(want)
        elif fits(want, have):
            report.matched.append(want.name)
        else:
            report.mismatched.append(Mismatch(want.name, want.kind, want, have))
    wanted = {want.name for want in target.expected}
    report.unexpected = [have for name, have in held.items() if name not in wanted]
    return report


def fits(want: Signature, have: Signature) -> bool:
    """What a restore asks for (`want`, shape None or dtype "unknown" where the target leaves it open)
    is what is held."""
    shape_fits = want.shape is None or want.shape == have.shape
    dtype_fits = want.dtype_name == "unknown" or want.dtype_name == have.dtype_name
    return shape_fits and dtype_fits


def _shape(sig: Signature):
    return None if sig.shape is None else list(sig.shape)
