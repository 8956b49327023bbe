"""The trajectory dock's exports (gui.trajectory.trajectory_panel): the plotted metric of every variable as
CSV (a row per checkpoint, a column per variable), and the plot as PNG or SVG, each to a place the person
picks outside the run (gui.base.dialogs.save_output)."""
from __future__ import annotations

from checkpoint_inspector.core.export.tables import write_csv

from ..base import dialogs
from ..base.plots import export_plot_image


class TrajectoryExports:
    """Mixed into TrajectoryPanel: uses its series, checkpoints, metric choice, plots and session."""

    def csv_rows(self) -> tuple[list[str], list[list]]:
        """Header and rows: step, prefix, then one column per variable (this metric)."""
        names = list(self.series)
        header = ["step", "prefix"] + [f"{self.series[n]['label']} {self.metric_choice.currentText()}" for n in names]
        rows = []
        for info in self.checkpoints:
            row = ["" if info.step is None else info.step, info.prefix]
            for name in names:
                point = self.series[name]["points"].get(info.prefix)
                row.append("" if point is None or point.value is None else repr(point.value))
            rows.append(row)
        return header, rows

    def export_csv_to(self, path: str) -> None:
        header, rows = self.csv_rows()
        write_csv(path, header, rows)

    def export_image_to(self, path: str) -> None:
        widget = self.histogram_plot if self.stack.currentWidget() is self.histogram_plot else self.plot
        export_plot_image(widget, path, "Checkpoint Inspector trajectory")

    def _export_csv_dialog(self) -> None:
        path = dialogs.save_output(self.session, "Export trajectory as CSV", "trajectory.csv", "CSV (*.csv)", "a CSV")
        if path:
            self.export_csv_to(path)

    def _export_image_dialog(self) -> None:
        path = dialogs.save_output(self.session, "Export plot", "trajectory.png", "PNG (*.png);;SVG (*.svg)", "a plot")
        if path:
            self.export_image_to(path)
