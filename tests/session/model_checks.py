"""The session model (core.session.model.SessionModel) driven as the window drives it, in a process that
never imports Qt: `python -m tests.session.model_checks FOLDER` writes TensorFlow runs into FOLDER, runs
every check and prints one JSON line {check: "ok" | the failure, "qt_imported": bool}. test_session_model.py
runs it in a child process, so that sys.modules tells the truth about Qt."""
from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path


def _runs(folder: Path) -> tuple[str, str]:
    from tests.tf_fixtures import write_tf1_run, write_tf2_keras_run

    return str(write_tf1_run(folder / "tf1_run")), str(write_tf2_keras_run(folder / "tf2_keras_run"))


def _recording(model) -> list[tuple]:
    from checkpoint_inspector.core.session.model import EVENTS

    heard: list[tuple] = []
    for name in EVENTS:
        getattr(model, name).connect(lambda *args, name=name: heard.append((name,) + args))
    return heard


def check_a_load_announces_the_run_then_the_checkpoint_then_its_plan(tf1, tf2):
    import tensorflow as tf

    from checkpoint_inspector.core.session.model import SessionModel

    model = SessionModel()
    heard = _recording(model)
    loaded = model.open(tf1)
    assert [h[0] for h in heard] == ["run_opened", "checkpoint_loaded", "plan_changed", "undo_changed"], heard
    latest = tf.train.get_checkpoint_state(tf1).model_checkpoint_path
    assert loaded.checkpoint.prefix == latest and model.current is loaded and model.run_folder == tf1
    assert sorted(v.name for v in loaded.variables) == sorted(n for n, _ in tf.train.list_variables(latest))


def check_edits_are_undone_and_redone_in_order(tf1, tf2):
    from checkpoint_inspector.core.edit.operations import Drop, RegexRename
    from checkpoint_inspector.core.edit.plan import preview
    from checkpoint_inspector.core.session.model import SessionModel

    model = SessionModel()
    model.open(tf1)
    heard = _recording(model)
    rename, drop = RegexRename(pattern="^dense/", replacement="layer/"), Drop(names=["global_step"])
    model.push(rename)
    model.push(drop)
    assert model.plan.operations == [rename, drop] and model.unsaved
    assert {p.target for p in preview(model.plan, model.current.variables).planned} == {"layer/kernel", "layer/bias"}
    model.undo()
    assert model.plan.operations == [rename] and model.edits.history.redo_text == drop.describe()
    model.undo()
    assert model.plan.operations == [] and not model.unsaved and not model.edits.history.can_undo
    model.redo()
    assert model.plan.operations == [rename]
    model.push(drop)  # a push after an undo drops what was undone
    assert model.plan.operations == [rename, drop] and not model.edits.history.can_redo
    assert [h[0] for h in heard].count("plan_changed") == 6 and [h[0] for h in heard].count("undo_changed") == 6
    model.plan_saved(model.edits, model.plan.to_json())
    assert not model.unsaved


def check_each_run_keeps_its_own_plan(tf1, tf2):
    from checkpoint_inspector.core.edit.operations import RegexRename
    from checkpoint_inspector.core.session.model import SessionModel

    model = SessionModel()
    model.open(tf1)
    model.push(RegexRename(pattern="^dense/", replacement="layer/"))
    model.open(tf2)
    assert model.plan.operations == [] and model.run_folder == tf2 and not model.edits.history.can_undo
    assert model.unsaved_runs() == [tf1]
    model.open(tf1)
    assert [op.describe() for op in model.plan.operations] == ["rename /^dense// → layer/"]


def check_the_selection_and_what_needs_one(tf1, tf2):
    from checkpoint_inspector.core.session.model import SessionModel

    model = SessionModel()
    heard = _recording(model)
    assert model.require_current() is None and heard[-1] == ("message", "Open a checkpoint first", 4000)
    model.open(tf2)
    assert model.require_selected() is None and heard[-1][:2] == ("message", "Select a variable first")
    kernel = next(v for v in model.current.variables if v.kind == "variable")
    model.select(kernel)
    assert model.selected is kernel and heard[-1] == ("selection_changed", kernel)
    assert model.open_run_folders() == [tf2] and model.shown_names() == [v.name for v in model.current.variables]


def check_runs_beside_the_open_run(tf1, tf2):
    import os
    import shutil

    from checkpoint_inspector.core.run.discovery import discover
    from checkpoint_inspector.core.session.model import SessionModel

    copy = shutil.copytree(tf1, os.path.join(os.path.dirname(tf1), "copied", "tf1_run"), dirs_exist_ok=True)
    model = SessionModel()
    heard = _recording(model)
    model.open(tf1)
    beside = [discover(path).single_run() for path in (tf2, copy)]
    for run in beside:
        model.add_comparison(run, None)
    assert heard[-1] == ("comparison_changed", [(beside[0], None), (beside[1], None)])
    parent = os.path.basename(os.path.dirname(tf1))
    # one folder name twice: both told apart by their parents' names; the other keeps its own
    assert model.run_names() == (f"{parent}/tf1_run", "tf2_keras_run", "copied/tf1_run")
    assert model.open_run_folders() == [tf1, tf2, copy]
    again = discover(tf2).single_run()
    model.add_comparison(again, "logs")  # the same run again: read afresh where it stood
    assert [(run.path, logs) for run, logs in model.comparisons] == [(again.path, "logs"), (beside[1].path, None)]
    model.remove_comparison(again.path)
    assert model.run_names() == (f"{parent}/tf1_run", "copied/tf1_run")
    model.remove_comparison()
    assert model.comparisons == [] and heard[-1] == ("comparison_changed", []) and model.run_names() == ("tf1_run",)


def check_the_api_holds_the_same_kind_of_object(tf1, tf2):
    import checkpoint_inspector as ci
    from checkpoint_inspector.core.session.model import SessionModel

    with ci.open(tf1) as run:
        assert isinstance(run.session, SessionModel) and run.session.current.checkpoint.step == run.steps[-1]


def main(folder: Path) -> dict:
    tf1, tf2 = _runs(folder)
    results = {}
    for name, check in sorted(globals().items()):
        if name.startswith("check_"):
            try:
                check(tf1, tf2)
                results[name] = "ok"
            except Exception:  # every check reported, not only the first that fails
                results[name] = traceback.format_exc(limit=3)
    results["qt_imported"] = sorted(m for m in sys.modules if m.split(".")[0] in ("PySide6", "shiboken6", "pyqtgraph"))
    return results


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
