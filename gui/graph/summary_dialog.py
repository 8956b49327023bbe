"""The graph's summary (the Graph window's Summary…): what a run's `.meta` or SavedModel graph holds, from a summary core made
(core.format.graph.summary.GraphSummary; this view parses nothing). One tree with a section each for
the ops by top-level scope, the collections, the variables (those the compared checkpoint lacks in red,
marked "not in checkpoint"), the Saver and the signatures; and a "Show graph in TensorBoard" button that
calls back whoever opened the dialog (writing the graph and starting TensorBoard are theirs)."""
from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QHeaderView, QLabel, QPushButton, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout)

from checkpoint_inspector.core.format.graph.summary import MISSING_MARK, TOP_LEVEL, GraphSummary, shape_text

from ..base.restore_colours import MISSING_OUTLINE

MISSING_COLOUR = MISSING_OUTLINE
SECTIONS = ("Ops by scope", "Collections", "Variables", "Saver", "Signatures")
MAX_SHOWN = 2000  # a collection or scope of 100,000 entries would make the tree crawl; the CLI's --json has all


class GraphDialog(QDialog):
    """`sections[title]` is each section's top-level item; `on_show_in_tensorboard()` is called (with no
    argument) by the button, which is disabled without it."""

    def __init__(self, summary: GraphSummary, on_show_in_tensorboard: Callable[[], None] | None = None,
                 parent=None):
        super().__init__(parent)
        self.summary = summary
        self.on_show_in_tensorboard = on_show_in_tensorboard
        self.setWindowTitle(f"Graph of {_shown_name(summary.path)}")
        self.heading = QLabel(_heading(summary))
        self.heading.setWordWrap(True)
        self.heading.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Name", "Value", "Note"])
        self.tree.setUniformRowHeights(True)
        self.tree.setTextElideMode(Qt.ElideMiddle)  # a long scope path keeps its start and its end
        self.tree.header().setSectionResizeMode(0, QHeaderView.Interactive)
        self.tree.header().setSectionResizeMode(1, QHeaderView.Interactive)
        self.tree.header().resizeSection(0, 320)
        self.tree.header().resizeSection(1, 170)
        self.sections = {title: self._section(title) for title in SECTIONS}
        self._fill_scopes()
        self._fill_collections()
        self._fill_variables()
        self._fill_saver()
        self._fill_signatures()
        self.sections["Variables"].setExpanded(True)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        self.tensorboard_button = QPushButton("Show graph in TensorBoard")
        self.tensorboard_button.setToolTip("Write the graph as an event file in the app's folder for this run "
                                           "(never in the run) and open it in TensorBoard beside the run")
        self.tensorboard_button.setEnabled(on_show_in_tensorboard is not None)
        self.tensorboard_button.clicked.connect(self._show_in_tensorboard)
        buttons.addButton(self.tensorboard_button, QDialogButtonBox.ActionRole)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(self.tree, 1)
        layout.addWidget(buttons)
        screen = self.screen().availableGeometry() if self.screen() else None
        self.resize(min(860, screen.width() - 60) if screen else 860, min(620, screen.height() - 80) if screen else 620)

    def missing_items(self) -> list[QTreeWidgetItem]:
        """The variable rows marked as not in the checkpoint (for tests and for whoever wants them)."""
        section = self.sections["Variables"]
        items = [section.child(i) for i in range(section.childCount())]
        return [item for item in items if item.text(2).startswith(MISSING_MARK)]

    # ---- sections ----------------------------------------------------------------------------------------

    def _section(self, title: str) -> QTreeWidgetItem:
        item = QTreeWidgetItem(self.tree, [title])
        item.setFirstColumnSpanned(True)  # its title and counts across the row
        font = item.font(0)
        font.setBold(True)
        item.setFont(0, font)
        return item

    def _describe(self, title: str, text: str) -> None:
        self.sections[title].setText(0, f"{title}: {text}")

    def _fill_scopes(self) -> None:
        section = self.sections["Ops by scope"]
        self._describe("Ops by scope", f"{self.summary.node_count:,} nodes, {len(self.summary.ops)} kinds of op")
        by_size = sorted(self.summary.scopes.items(), key=lambda item: (-sum(item[1].values()), item[0]))
        for scope, ops in by_size[:MAX_SHOWN]:
            item = QTreeWidgetItem(section, ["(top level)" if scope == TOP_LEVEL else scope,
                                             _count(sum(ops.values()), "node")])
            for op, count in ops.items():
                QTreeWidgetItem(item, [op, f"{count:,}"])

    def _fill_collections(self) -> None:
        section = self.sections["Collections"]
        self._describe("Collections", f"{len(self.summary.collections)}")
        for name, values in self.summary.collections.items():
            item = QTreeWidgetItem(section, [name, _count(len(values), "item")])
            for value in values[:MAX_SHOWN]:
                QTreeWidgetItem(item, [value])
            if len(values) > MAX_SHOWN:
                QTreeWidgetItem(item, [f"… and {len(values) - MAX_SHOWN:,} more"])

    def _fill_variables(self) -> None:
        summary = self.summary
        section = self.sections["Variables"]
        missing = set(summary.missing_from_checkpoint or ())
        compared = (f", {len(missing)} not in {_shown_name(summary.checkpoint)}" if summary.checkpoint
                    else ", not compared with a checkpoint")
        self._describe("Variables", f"{len(summary.variables)}{compared}")
        red = QBrush(QColor(MISSING_COLOUR))
        for variable in summary.variables:
            notes = ([MISSING_MARK] if variable.name in missing else []) + variable.notes()
            notes += ["trainable"] if variable.trainable else []
            item = QTreeWidgetItem(section, [variable.name, f"{variable.dtype} {shape_text(variable.shape)}",
                                             "; ".join(notes)])
            if variable.name in missing:
                for column in range(3):
                    item.setForeground(column, red)

    def _fill_saver(self) -> None:
        section = self.sections["Saver"]
        saver = self.summary.saver
        if saver is None:
            self._describe("Saver", "none")
            return
        self._describe("Saver", f"restores with {saver.restore_op_name}")
        for field, value in saver.record().items():
            QTreeWidgetItem(section, [field, str(value)])

    def _fill_signatures(self) -> None:
        section = self.sections["Signatures"]
        self._describe("Signatures", f"{len(self.summary.signatures)}")
        for name, signature in self.summary.signatures.items():
            item = QTreeWidgetItem(section, [name, signature["method_name"]])
            for side in ("inputs", "outputs"):
                group = QTreeWidgetItem(item, [side, f"{len(signature[side])}"])
                for key, tensor in signature[side].items():
                    QTreeWidgetItem(group, [key, f"{tensor['dtype']} {shape_text(tensor['shape'])}", tensor["name"]])
                group.setExpanded(True)
            item.setExpanded(True)

    def _show_in_tensorboard(self) -> None:
        if self.on_show_in_tensorboard is not None:
            self.on_show_in_tensorboard()


def _heading(summary: GraphSummary) -> str:
    version = summary.meta_info.get("tensorflow_version")
    tags = summary.meta_info.get("tags")
    parts = [summary.path, f"{summary.node_count:,} nodes", f"{len(summary.variables)} variables"]
    parts += [f"TensorFlow {version}"] if version else []
    parts += [f"tags {', '.join(tags)}"] if tags else []
    return " · ".join(parts)


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" + ("" if number == 1 else "s")


def _shown_name(path: str | None) -> str:
    """A SavedModel by its folder (every one has a saved_model.pb), a file or checkpoint by its name."""
    if not path:
        return ""
    name = os.path.basename(path)
    if name == "saved_model.pb" or path.endswith(os.path.join("variables", "variables")):
        return os.path.basename(os.path.dirname(path if name == "saved_model.pb" else os.path.dirname(path)))
    return name
