"""The Diagnose Run window: what went wrong in the run's training, found from its checkpoints alone
(core.analysis.diagnosis.diagnosis), as a ranked list of findings: severity, kind, the variables, the first step that
shows it, and a one-line summary; the picked finding's summary, advice and variables in full below.
Picking a finding emits `finding_chosen`: the main window selects its variables and plots its evidence
over steps with its first step marked (gui.window.diagnosis_actions).

The diagnosis runs on this window's worker thread, with progress and ✕ in its status bar; what it reads
of a checkpoint is kept per checkpoint (core.analysis.trajectories.metric_records), so diagnosing again after the run
grew reads only the new checkpoints. Esc closes the window; closing it stops the work."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QKeySequence, QShortcut
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QMainWindow, QPushButton, QSplitter, QTextBrowser,
                               QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from checkpoint_inspector.core.analysis.diagnosis.diagnosis_findings import KINDS

from ..base import errors
from ..base.computed_window import ComputedWhenShown
from ..base.status_progress import StatusProgress
from ..base.worker import JobRunner

COLUMNS = ("severity", "kind", "variables", "first step", "summary")
SEVERITY_COLOURS = {"critical": "#d62728", "high": "#ff7f0e", "medium": "#bcbd22", "low": "#7f7f7f"}
FINDING_ROLE = Qt.UserRole + 1


class DiagnosisWindow(ComputedWhenShown, QMainWindow):
    finding_chosen = Signal(object)  # core.analysis.diagnosis.diagnosis_findings.Finding
    diagnosed = Signal(object)       # core.analysis.diagnosis.diagnosis.Diagnosis, once shown

    def __init__(self, checkpoints, executor=None, parent=None):
        """checkpoints: the run's, oldest first; executor: () -> where the pieces run (None: threads)."""
        super().__init__(parent)
        self.setWindowTitle("Diagnose run — Checkpoint Inspector")
        self.runner = JobRunner(self)
        self.executor = executor or (lambda: None)
        self.checkpoints = list(checkpoints)
        self.diagnosis = None

        self.headline = QLabel("")
        self.headline.setWordWrap(True)
        self.again_button = QPushButton("Diagnose Again")
        self.again_button.setToolTip("Look again (checkpoints read before are not read again)")
        self.again_button.clicked.connect(lambda *_: self.compute())
        top = QHBoxLayout()
        top.addWidget(self.headline, 1)
        top.addWidget(self.again_button)

        self.findings = QTreeWidget()
        self.findings.setColumnCount(len(COLUMNS))
        self.findings.setHeaderLabels(list(COLUMNS))
        self.findings.setRootIsDecorated(False)
        self.findings.setUniformRowHeights(True)
        self.findings.setAlternatingRowColors(True)
        self.findings.currentItemChanged.connect(lambda item, _previous: self._picked(item))
        self.details = QTextBrowser()
        self.details.setOpenLinks(False)
        splitter = QSplitter(Qt.Vertical)
        splitter.addWidget(self.findings)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        self.setCentralWidget(central)
        self.status = StatusProgress(self.statusBar(), self.cancel)
        screen = self.screen().availableGeometry() if self.screen() else None
        self.resize(min(1000, screen.width() - 40) if screen else 1000,
                    min(560, screen.height() - 60) if screen else 560)
        QShortcut(QKeySequence(Qt.Key_Escape), self, self.close)

    # ---- computing ----------------------------------------------------------------------------------
    def set_checkpoints(self, checkpoints) -> None:
        """Another run, or the run grew: diagnosed now if the window is shown, else when it is shown."""
        self.checkpoints = list(checkpoints)
        self.inputs_changed()

    def compute(self) -> None:
        from checkpoint_inspector.core.analysis.diagnosis.diagnosis import diagnose  # numpy's linear algebra loads when first asked for

        self.cancel()
        self.stale = False
        checkpoints, executor = list(self.checkpoints), self.executor()
        self.status.set_busy(True, f"Diagnosing {len(checkpoints)} checkpoints…")
        self.again_button.setEnabled(False)
        handle = self.runner.start("diagnosis", lambda: diagnose(checkpoints, executor=executor),
                                   on_finished=lambda result: self._diagnosed(handle, result),
                                   on_failed=lambda exc: self._failed(handle, exc),
                                   on_progress=lambda p: handle is self._job and self.status.show(p),
                                   on_cancelled=lambda: self._stopped(handle))
        self._job = handle

    def _ended(self, handle) -> bool:
        if handle is not self._job:
            return False  # a superseded diagnosis' late news
        self._job = None
        self.status.set_busy(False)
        self.again_button.setEnabled(True)
        return True

    def _diagnosed(self, handle, diagnosis) -> None:
        if not self._ended(handle):
            return
        self.diagnosis = diagnosis
        self._fill(diagnosis)
        self.diagnosed.emit(diagnosis)

    def _failed(self, handle, exc) -> None:
        if self._ended(handle):
            errors.show_error(self, "Cannot diagnose the run", errors.describe(exc),
                              getattr(exc, "formatted_traceback", ""))

    def _stopped(self, handle) -> None:
        if self._ended(handle):
            self.status.text.setText("Stopped: Diagnose Again to look again")

    # ---- showing ------------------------------------------------------------------------------------
    def _fill(self, diagnosis) -> None:
        self.findings.clear()
        steps = [s for s in diagnosis.steps if s is not None]
        span = f"steps {steps[0]:,} to {steps[-1]:,}" if steps else "no steps"
        count = len(diagnosis.findings)
        self.headline.setText(
            f"<b>{count} finding{'' if count == 1 else 's'}</b> in {len(diagnosis.steps)} checkpoints ({span}), "
            f"looked for: {', '.join(KINDS)}." if count else
            f"<b>Nothing wrong found</b> in {len(diagnosis.steps)} checkpoints ({span}): no non-finite values, "
            f"frozen or dead layers, runaway scale, spectral trouble, optimizer or run-integrity problem.")
        for finding in diagnosis.findings:
            first = "" if finding.first_step is None else f"{finding.first_step:,}"
            item = QTreeWidgetItem([finding.severity, finding.kind, finding.labels_in_brief(), first, finding.summary])
            item.setData(0, FINDING_ROLE, finding)
            item.setForeground(0, QBrush(QColor(SEVERITY_COLOURS.get(finding.severity, "#7f7f7f"))))
            item.setToolTip(4, finding.summary)
            item.setTextAlignment(3, Qt.AlignRight | Qt.AlignVCenter)
            self.findings.addTopLevelItem(item)
        for column in range(len(COLUMNS) - 1):
            self.findings.resizeColumnToContents(column)
        problems = [f"{prefix}: {problem}" for prefix, problem in diagnosis.problems.items()]
        self.details.setPlainText("Some checkpoints could not be read in full:\n" + "\n".join(problems)
                                  if problems else "Pick a finding to see its advice and plot its evidence.")
        self.status.text.setText(f"Diagnosed {len(diagnosis.steps)} checkpoints")

    def _picked(self, item) -> None:
        finding = None if item is None else item.data(0, FINDING_ROLE)
        if finding is None:
            return
        names = "".join(f"<li>{_escape(label)} <span style='color:#888'>({_escape(name)})</span></li>"
                        for label, name in zip(finding.labels, finding.variables))
        steps = "" if finding.first_step is None else \
            f"<p>From step {finding.first_step:,}" + ("" if finding.last_step is None else
                                                      f" to step {finding.last_step:,}") + ".</p>"
        self.details.setHtml(f"<p><b>{_escape(finding.kind)}</b> ({_escape(finding.severity)}): "
                             f"{_escape(finding.summary)}</p>{steps}<p><b>What to do:</b> {_escape(finding.advice)}</p>"
                             f"<ul>{names}</ul>")
        self.finding_chosen.emit(finding)

    def choose(self, row: int) -> None:
        """Pick the finding of this row, as a click does."""
        self.findings.setCurrentItem(self.findings.topLevelItem(row))


def _escape(text: str) -> str:
    from html import escape

    return escape(str(text))
