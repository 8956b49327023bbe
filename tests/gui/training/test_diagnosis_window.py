"""Tools > Diagnose Run, offscreen, on TF-written runs with one planted problem (tests/diagnosis_fixtures.py):
the window lists what core.analysis.diagnosis.diagnosis finds, ranked, off the GUI thread; picking a finding selects
its stored variables in the browser and plots its evidence over steps with its first step marked; a healthy
run says nothing was found; the run growing brings a new diagnosis; Esc closes the window and stops it."""
from __future__ import annotations

import shutil

import numpy as np
import pytest
from PySide6.QtCore import Qt

from checkpoint_inspector.core.analysis.diagnosis.diagnosis import diagnose
from checkpoint_inspector.core.jobs import run_to_end
from checkpoint_inspector.core.run.discovery import discover
from tests.diagnosis_fixtures import FIRST_BAD_STEP, write_run
from tests.gui.trajectory.test_trajectory_panel import open_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("diagnosis_window")
    return {plant: write_run(root / plant, plant) for plant in ("healthy", "dead_units")}


def _diagnosed(qtbot, window, folder):
    open_run(qtbot, window, folder)
    diagnosis_window = window.diagnosing.show()
    qtbot.addWidget(diagnosis_window)
    qtbot.waitUntil(lambda: diagnosis_window.diagnosis is not None and diagnosis_window._job is None, timeout=60000)
    return diagnosis_window


def test_findings_listed_and_a_pick_selects_and_plots_the_evidence(qtbot, main_window, runs):
    folder, keys = runs["dead_units"]
    diagnosis_window = _diagnosed(qtbot, main_window, folder)
    oracle = run_to_end(diagnose(discover(str(folder)).single_run().checkpoints))
    shown = [diagnosis_window.findings.topLevelItem(row) for row in range(diagnosis_window.findings.topLevelItemCount())]
    assert [(item.text(0), item.text(1), item.text(4)) for item in shown] == \
        [(f.severity, f.kind, f.summary) for f in oracle.findings]
    assert "1 finding" in diagnosis_window.headline.text()
    row = [item.text(1) for item in shown].index("dead_units")
    assert shown[row].text(3) == f"{FIRST_BAD_STEP:,}"

    with qtbot.waitSignal(diagnosis_window.finding_chosen, timeout=5000):
        diagnosis_window.choose(row)
    assert {info.name for info in main_window.browser.selected_variables()} == {keys["middle/kernel"],
                                                                                keys["middle/bias"]}
    assert "What to do" in diagnosis_window.details.toPlainText() or "What to do" in diagnosis_window.details.toHtml()
    evidence = main_window.trajectory.evidence
    finding = oracle.findings[row]
    [curve, line] = evidence.items
    xs, ys = curve.getData()
    expected = sorted(finding.evidence["dead_fraction"].items())
    assert list(xs) == [step for step, _ in expected]
    np.testing.assert_array_equal(ys, [value for _, value in expected])
    assert line.value() == FIRST_BAD_STEP and str(FIRST_BAD_STEP) in line.label.toPlainText()
    main_window.trajectory.x_axis.setCurrentIndex(1)  # checkpoint index: the evidence follows the axis
    steps = [c.step for c in main_window.session.current.run.checkpoints]
    assert list(evidence.items[0].getData()[0]) == [steps.index(step) for step, _ in expected]
    main_window.trajectory.clear()
    assert evidence.items == [] and not evidence.shown


def test_a_healthy_run_says_nothing_was_found(qtbot, main_window, runs):
    diagnosis_window = _diagnosed(qtbot, main_window, runs["healthy"][0])
    assert diagnosis_window.findings.topLevelItemCount() == 0
    assert "Nothing wrong found" in diagnosis_window.headline.text()


def test_the_run_growing_is_diagnosed_again_and_esc_closes(qtbot, main_window, runs, tmp_path):
    folder = tmp_path / "growing"
    source = runs["dead_units"][0]
    shutil.copytree(source, folder)
    checkpoints = discover(str(folder)).single_run().checkpoints
    newest = checkpoints[-1].prefix
    for path in folder.glob(f"{newest.rsplit('/', 1)[1]}.*"):  # the run before its last save
        path.rename(tmp_path / path.name)
    diagnosis_window = _diagnosed(qtbot, main_window, folder)
    before = len(diagnosis_window.diagnosis.steps)
    for path in tmp_path.glob(f"{newest.rsplit('/', 1)[1]}.*"):
        path.rename(folder / path.name)
    with qtbot.waitSignal(diagnosis_window.diagnosed, timeout=60000):
        main_window.session.grow_run(discover(str(folder)).single_run())
    assert len(diagnosis_window.diagnosis.steps) == before + 1
    qtbot.keyClick(diagnosis_window, Qt.Key_Escape)
    assert not diagnosis_window.isVisible()
