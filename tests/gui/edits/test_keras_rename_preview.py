"""A rename a Keras file cannot hold (one weight renamed alone, or moved out of its layer's place) is flagged
by the Edits preview before the Save dialog asks anything, with the very words the save refuses it in
(core.edit.keras_layers.keras_layer_renames is the one rule); a whole layer renamed is not flagged."""
import re

import pytest

from checkpoint_inspector.core.edit.shown_names import RenameShown
from checkpoint_inspector.core.errors import PlanError
from checkpoint_inspector.core.jobs import run_to_end


def _shown_rename(old: str, new: str) -> RenameShown:
    return RenameShown(pattern=f"^{re.escape(old)}$", replacement=new)  # what F2 pushes


@pytest.mark.parametrize("file", ["model.weights.h5", "model.keras"])
def test_a_keras_single_weight_rename_is_flagged_before_saving(qtbot, main_window, tf_ckpts, tmp_path, file):
    from checkpoint_inspector.core.edit.save import save_remapped

    window = main_window
    with qtbot.waitSignal(window.session.checkpoint_loaded, timeout=20000):
        window.open_path(str(tf_ckpts.keras_files / file))
    panel = window.edits
    for operation in (_shown_rename("hidden/kernel", "hidden/weights"), _shown_rename("hidden/kernel", "head/kernel")):
        window.session.push(operation)
        # the save's own answer to this plan, without the window
        with pytest.raises(PlanError) as refused:
            run_to_end(save_remapped(window.session.current.reader, window.session.plan,
                                            str(tmp_path / f"copy-{file}"), plan_preview=panel.current_preview()))
        assert f"⚠ {refused.value.problem}" in panel.problems.text().splitlines()
        assert not panel.save_button.isEnabled()
        window.session.undo_group.undo()
    window.session.push(RenameShown(pattern="^hidden/", replacement="head/"))  # a whole layer: Keras can say it
    assert "cannot be moved" not in panel.problems.text() and "rename one weight" not in panel.problems.text()
    assert panel.save_button.isEnabled()
