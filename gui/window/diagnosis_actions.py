"""Tools > Diagnose Run in the main window: the Diagnosis window (gui.training.diagnosis_window) on the open
run, kept up with it (another run, new checkpoints), and what picking one of its findings does here: the
finding's variables selected in the variable browser (optimizer slots and bookkeeping shown when it names
them) and its evidence plotted in the Trajectory dock with its first step marked."""
from __future__ import annotations

from PySide6.QtGui import QKeySequence


class DiagnosisActions:
    def __init__(self, window):
        self.window = window
        self.session = window.session
        self.diagnosis_window = None  # made when first asked for
        self.session.run_opened.connect(lambda loaded: self._run_changed(loaded.run))
        self.session.run_grown.connect(self._run_changed)

    def build_menu(self, menu) -> None:
        action = menu.addAction("&Diagnose Run…")
        action.setShortcut(QKeySequence("Ctrl+Shift+D"))
        action.setToolTip("What went wrong in training, in which layer, since which step: from the checkpoints alone")
        action.triggered.connect(lambda *_: self.show())

    def show(self):
        """The Diagnosis window of the open run (diagnosed when shown, if the run is new to it)."""
        if self.session.require_current() is None:
            return None
        if self.diagnosis_window is None:
            from ..training.diagnosis_window import DiagnosisWindow

            self.diagnosis_window = DiagnosisWindow(self.session.current.run.checkpoints,
                                                    executor=lambda: self.window.compute.current)
            self.diagnosis_window.finding_chosen.connect(self.show_finding)
        self.diagnosis_window.show()
        self.diagnosis_window.raise_()
        return self.diagnosis_window

    def _run_changed(self, run) -> None:
        if self.diagnosis_window is not None:
            self.diagnosis_window.set_checkpoints(run.checkpoints)

    def show_finding(self, finding) -> None:
        """Select the finding's variables and plot its evidence over steps, first step marked."""
        browser = self.window.browser
        found = browser.select_names(finding.variables)
        if found < len(finding.variables) and not browser.hidden_box.isChecked():
            browser.hidden_box.setChecked(True)  # a slot or a counter it names is hidden by default
            found = browser.select_names(finding.variables)
        self.window.trajectory_dock.show()
        self.window.trajectory.evidence.show(finding)
        if found < len(finding.variables):
            self.window.statusBar().showMessage(
                f"{len(finding.variables) - found} of the finding's variables are not in the checkpoint shown "
                f"(or the filter hides them)", 8000)

    def close(self) -> None:
        if self.diagnosis_window is not None:
            self.diagnosis_window.close()
