"""The restore check's colours, one place for every view that marks what a checkpoint lacks or holds
otherwise than a program asks: the Check dialog's rows (gui.compare.check_dialog) and the Graph view's
variable nodes the checkpoint lacks (gui.graph). Pale fills, drawn under dark text in any theme."""
from __future__ import annotations

RESTORE_COLOURS = {"missing": "#f6d5d1", "mismatched": "#f3c6a5", "not asked for": "#ececec"}
MISSING_OUTLINE = "#c0392b"  # the red that outlines or writes what is missing
