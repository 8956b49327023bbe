"""A save takes what is already known (issue item 6): the window's save of a rename previews the plan once
(the preview the person saw) and describes no variable again after the checkpoint was opened, nor reopens
its reader; the CLI's `remap` describes once and previews once. One function judges a destination
(core.edit.destination.judge_destination), and the CLI and the window refuse or ask by its verdicts.

Counted with wrappers around core.edit.plan.preview and core.run.variables.describe_variables, put
wherever they are looked up (the defining module and every module that imported the name)."""
import shutil
import sys
from pathlib import Path

import pytest

from checkpoint_inspector.core.edit.destination import Verdict, judge_destination
from checkpoint_inspector.core.edit.operations import RegexRename
from checkpoint_inspector.core.errors import DestinationError
from checkpoint_inspector.core.format.source import SourceKind
from checkpoint_inspector.core.run.discovery import discover

RENAME = ("^encoder/", "net/")


def _count_calls(monkeypatch, module, name: str, counts: dict) -> None:
    """Count the calls of `module.name` wherever it is looked up: in its module (for imports still to come)
    and in every loaded module of the package that imported it by name."""
    import checkpoint_inspector.core.cli.writing  # noqa: F401  (the modules of a save, loaded before the wrappers)
    import checkpoint_inspector.core.edit.keras_save  # noqa: F401
    import checkpoint_inspector.core.edit.save  # noqa: F401
    import checkpoint_inspector.core.run.loading  # noqa: F401

    original = getattr(module, name)
    counts[name] = 0

    def counted(*args, **kwargs):
        counts[name] += 1
        return original(*args, **kwargs)

    for loaded in list(sys.modules.values()):
        if getattr(loaded, "__name__", "").startswith("checkpoint_inspector") and \
                getattr(loaded, name, None) is original:
            monkeypatch.setattr(loaded, name, counted)


@pytest.fixture
def counts(monkeypatch):
    """{"preview": calls, "describe_variables": calls, "open_reader": CheckpointInfo.open_reader calls}."""
    from checkpoint_inspector.core.edit import plan
    from checkpoint_inspector.core.run import variables
    from checkpoint_inspector.core.run.checkpoint_info import CheckpointInfo

    made = {}
    _count_calls(monkeypatch, plan, "preview", made)
    _count_calls(monkeypatch, variables, "describe_variables", made)
    made["open_reader"] = 0
    real_open = CheckpointInfo.open_reader

    def open_reader(info):
        made["open_reader"] += 1
        return real_open(info)

    monkeypatch.setattr(CheckpointInfo, "open_reader", open_reader)
    return made


def _tf():
    import tensorflow as tf

    return tf


# ---- the window --------------------------------------------------------------------------------------

def _open(qtbot, window, path):
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=60000):
        window.open_path(str(path))


def test_a_window_save_previews_once_and_describes_nothing_again(qtbot, main_window, tf_ckpts, tmp_path,
                                                                 monkeypatch, counts):
    """many_vars: 12,000 keys written by TensorFlow; every one renamed."""
    from checkpoint_inspector.gui.base import dialogs

    window = main_window
    _open(qtbot, window, tf_ckpts.many_vars)
    assert counts["describe_variables"] == 1 and counts["open_reader"] == 1  # the open
    previews_before = counts["preview"]  # the empty plan's, shown when the checkpoint loaded
    window.session.push(RegexRename(pattern=RENAME[0], replacement=RENAME[1]))
    shown = window.edits.current_preview()
    destination = tmp_path / "saved" / "many_vars"
    monkeypatch.setattr(dialogs, "save_output", lambda *args, **kwargs: str(destination))
    with qtbot.waitSignal(window.edits.saved, timeout=120000):
        window.edits.save_dialog()
    assert counts["preview"] - previews_before == 1  # the one the person saw, which the save took
    assert counts["describe_variables"] == 1 and counts["open_reader"] == 1  # nothing again since the open
    assert window.edits.last_save[2] is shown and window.edits.current_preview() is shown
    keys = dict(_tf().train.list_variables(str(destination)))
    assert len(keys) == 12000 and all(key.startswith("net/") for key in keys)


def test_a_window_save_of_the_run_reopens_only_the_checkpoints_not_shown(qtbot, main_window, tf_ckpts, tmp_path,
                                                                         monkeypatch, counts):
    from checkpoint_inspector.gui.base import dialogs

    window = main_window
    _open(qtbot, window, tf_ckpts.tf1_run)
    checkpoints = len(window.session.current.run.checkpoints)
    opened, described = counts["open_reader"], counts["describe_variables"]
    window.session.push(RegexRename(pattern="^dense/", replacement="layer/"))
    previews = counts["preview"]
    window.edits.all_steps.setChecked(True)
    monkeypatch.setattr(dialogs, "save_output_folder", lambda *args, **kwargs: str(tmp_path / "copy"))
    with qtbot.waitSignal(window.edits.saved, timeout=120000) as saved:
        window.edits.save_dialog()
    assert len(saved.args[0]) == checkpoints
    others = checkpoints - 1  # the one shown is neither reopened, described nor previewed again
    assert counts["open_reader"] - opened == others and counts["describe_variables"] - described == others
    assert counts["preview"] - previews == others
    assert _tf().train.latest_checkpoint(str(tmp_path / "copy")).endswith("model.ckpt-60")


def test_the_window_refuses_the_source_before_asking_and_asks_before_replacing(qtbot, main_window, tf_ckpts,
                                                                               tmp_path, monkeypatch):
    from checkpoint_inspector.gui.base import dialogs

    window = main_window
    run = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf1_run, run)
    _open(qtbot, window, run)
    window.session.push(RegexRename(pattern="^dense/", replacement="layer/"))
    questions = []
    answer = [False]
    monkeypatch.setattr(dialogs, "ask_yes_no", lambda parent, title, question, default_yes=True: questions.append(
        (title, default_yes)) or answer[0])
    source = window.session.current.reader.prefix
    monkeypatch.setattr(dialogs, "save_file", lambda parent, title, suggestion, pattern="": source)
    window.edits.save_dialog()  # over the source: said, nothing asked, nothing started
    assert questions == [] and not window.edits.slot.busy
    assert any("that is the source checkpoint" in message for message in window.shown_errors)

    elsewhere = tmp_path / "elsewhere" / "copy"
    elsewhere.parent.mkdir()
    for file in run.glob("model.ckpt-60.*"):
        if not file.name.endswith(".meta"):
            shutil.copy(file, elsewhere.parent / file.name.replace("model.ckpt-60", "copy"))
    monkeypatch.setattr(dialogs, "save_file", lambda parent, title, suggestion, pattern="": str(elsewhere))
    window.edits.save_dialog()  # a checkpoint there: Replace? No keeps it
    assert questions == [("Replace?", False)] and not window.edits.slot.busy
    assert "dense/kernel" in dict(_tf().train.list_variables(str(elsewhere)))
    answer[0] = True
    with qtbot.waitSignal(window.edits.saved, timeout=60000):
        window.edits.save_dialog()
    assert "layer/kernel" in dict(_tf().train.list_variables(str(elsewhere)))


# ---- the CLI -----------------------------------------------------------------------------------------

def _remap(*arguments) -> int:
    from checkpoint_inspector.core.cli import entry

    return entry.run(["remap", *map(str, arguments)])


def test_the_cli_remap_describes_once_and_previews_once(tf_ckpts, tmp_path, counts):
    destination = tmp_path / "cli" / "many_vars"
    assert _remap(tf_ckpts.many_vars, destination, "--rename", "=".join(RENAME)) == 0
    assert (counts["describe_variables"], counts["preview"], counts["open_reader"]) == (1, 1, 1)
    assert all(key.startswith("net/") for key, _ in _tf().train.list_variables(str(destination)))


def test_the_cli_remap_of_a_run_opens_and_describes_each_checkpoint_once(tf_ckpts, tmp_path, counts):
    checkpoints = len(discover(str(tf_ckpts.tf1_run)).single_run().checkpoints)
    assert _remap(tf_ckpts.tf1_run, tmp_path / "run", "--all-steps", "--rename", "^dense/=layer/") == 0
    assert counts == {"describe_variables": checkpoints, "preview": checkpoints, "open_reader": checkpoints}


def test_the_cli_refuses_as_the_judge_says(tf_ckpts, tmp_path, capsys):
    source = tf_ckpts.tf1_run / "model.ckpt-60"
    assert _remap(source, source, "--rename", "^dense/=layer/") == 2
    assert "that is the source checkpoint" in capsys.readouterr().err
    assert _remap(source, tmp_path / "copy", "--rename", "^dense/=layer/") == 0
    assert _remap(source, tmp_path / "copy", "--rename", "^dense/=layer/") == 2
    assert "a checkpoint exists there already" in capsys.readouterr().err
    assert _remap(source, tmp_path / "copy", "--rename", "^dense/=other/", "--overwrite") == 0
    assert "other/kernel" in dict(_tf().train.list_variables(str(tmp_path / "copy")))
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file")
    capsys.readouterr()
    assert _remap(source, blocker / "new" / "copy", "--rename", "^dense/=layer/") == 2
    assert capsys.readouterr().err.strip() == f"error: {blocker}: is a file, not a folder to save into"


# ---- the judge ---------------------------------------------------------------------------------------

@pytest.fixture
def run(tf_ckpts, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(tf_ckpts.tf1_run, copy)
    return copy


def test_the_source_and_its_files_are_refused(run):
    source = str(run / "model.ckpt-60")
    judged = judge_destination(source, source)
    assert judged.verdict is Verdict.OVER_THE_SOURCE and judged.refused and "that is the source" in judged.reason
    for destination in (source + ".index", str(run / "model")):  # one of its files / a prefix of its names
        judged = judge_destination(source, destination, run_folder=None, overwrite=True)
        assert judged.verdict is Verdict.OVER_THE_SOURCE and "files of the source checkpoint" in judged.reason
    link = run.parent / "link"
    link.symlink_to(run)
    assert judge_destination(source, str(link / "model.ckpt-60")).verdict is Verdict.OVER_THE_SOURCE


def test_an_existing_checkpoint_needs_overwrite_but_never_one_of_the_source_run(run, tmp_path):
    source, other = str(run / "model.ckpt-60"), str(run / "model.ckpt-50")
    judged = judge_destination(source, other)
    assert judged.verdict is Verdict.EXISTS and not judged.refused and "exists there already" in judged.reason
    judged = judge_destination(source, other, overwrite=True)
    assert judged.verdict is Verdict.OVER_THE_SOURCE and "another checkpoint of the source's run" in judged.reason
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(run, elsewhere)
    assert judge_destination(source, str(elsewhere / "model.ckpt-50")).verdict is Verdict.EXISTS
    assert judge_destination(source, str(elsewhere / "model.ckpt-50"), overwrite=True).acceptable
    assert judge_destination(source, str(elsewhere / "new")).acceptable


def test_inside_the_run_needs_a_yes_and_a_file_is_no_folder(run, tmp_path):
    source = str(run / "model.ckpt-60")
    judged = judge_destination(source, str(run / "copy"), run_folder=str(run))
    assert judged.verdict is Verdict.INSIDE_THE_RUN and not judged.refused and not judged.acceptable
    assert judge_destination(source, str(run / "copy")).acceptable  # once the person said yes
    assert judge_destination(None, str(run / "table.csv"), str(run)).verdict is Verdict.INSIDE_THE_RUN  # an export
    assert judge_destination(None, str(tmp_path / "table.csv"), str(run)).acceptable
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file")
    for judged in (judge_destination(source, str(blocker / "deeper" / "copy")),
                   judge_destination(None, str(blocker / "table.csv")),
                   judge_destination(discover(str(run)).single_run().checkpoints, str(blocker / "folder"))):
        assert judged.verdict is Verdict.NOT_A_FOLDER and judged.refused and judged.place == str(blocker)
        with pytest.raises(DestinationError, match="is a file, not a folder to save into"):
            judged.check()


def test_a_keras_copy_is_a_file_of_its_kind(tmp_path):
    source = str(tmp_path / "model.keras")
    judged = judge_destination(source, str(tmp_path / "copy.weights.h5"), kind=SourceKind.KERAS_ARCHIVE)
    assert judged.verdict is Verdict.WRONG_KIND and "name it ….keras" in judged.reason
    assert judge_destination(source, source, kind=SourceKind.KERAS_ARCHIVE).reason.startswith("that is the source file")
    (tmp_path / "copy.keras").write_bytes(b"")
    assert judge_destination(source, str(tmp_path / "copy.keras"), kind=SourceKind.KERAS_ARCHIVE).verdict \
        is Verdict.EXISTS


def test_a_whole_run_goes_to_a_new_folder(run, tmp_path):
    checkpoints = discover(str(run)).single_run().checkpoints
    judged = judge_destination(checkpoints, str(run), run_folder=str(run))
    assert judged.verdict is Verdict.OVER_THE_SOURCE and "the run being read" in judged.reason
    assert judge_destination(checkpoints, str(run / "copy"), str(run)).verdict is Verdict.INSIDE_THE_RUN
    assert judge_destination(checkpoints, str(tmp_path / "new")).acceptable
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "readme.txt").write_text("mine")
    assert judge_destination(checkpoints, str(notes)).acceptable  # written beside what replaces nothing
    (notes / "checkpoint").write_text('model_checkpoint_path: "other"\n')
    assert judge_destination(checkpoints, str(notes)).verdict is Verdict.EXISTS  # another run's state file
    assert judge_destination(checkpoints, str(notes), overwrite=True).acceptable
    earlier = tmp_path / "earlier"
    shutil.copytree(run, earlier)
    (earlier / "checkpoint").unlink()
    assert judge_destination(checkpoints, str(earlier)).verdict is Verdict.EXISTS  # its checkpoints replaced
