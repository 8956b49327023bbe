"""The curves of the trajectory dock's plotted variables in every run on the plot (mixed into
TrajectoryPanel): one curve per variable and run, coloured by variable while the window's run is alone,
by run (gui.trajectory.plotted_runs) with a symbol per variable once runs are beside it, as TensorBoard
tells runs apart. The legend then names each variable (its symbol) and each run (its colour) once, not
every pairing of them, so three runs of four variables take seven rows, not twelve. A run unchecked in the run list keeps its curves, hidden; a run that leaves the plot
takes its curves along."""
from __future__ import annotations

import pyqtgraph as pg

_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
_SYMBOLS = ("o", "t", "s", "d", "star", "p", "h", "+")  # variables told apart when colour tells the runs


class RunCurves:
    """Uses the panel's runs (PlottedRuns), plot, legend, logged curves, session and _compute."""

    @property
    def series(self) -> dict:
        """The window's run's curves: stored name -> {"name", "label", "points": {prefix: Point}, "curve", "run"}."""
        return self.runs.runs[0].series

    @property
    def run_names(self) -> list[str]:
        return [run.name for run in self.runs.runs]

    @property
    def comparing(self) -> bool:
        return self.runs.comparing

    def _run_opened(self, loaded) -> None:
        """Another run: nothing of the last one left on a plot (curves, bands, histograms, its logged curve,
        the hover box, the ranges they gave), its checkpoints on the axis, its logs to come."""
        # Its logs go first: drawn again over the new checkpoints, the last run's logged curve would
        # give the empty plot its x range through the link of the logged axis.
        self.logged.set_logs(0, None, loaded.run.checkpoints)
        self.clear()
        self.runs.set_window_run(loaded.run.path, self.session.run_names()[0], loaded.run.checkpoints)
        self.set_checkpoints(loaded.run.checkpoints)

    def _comparison_changed(self, comparisons) -> None:
        """The runs beside the window's ([(Run, TrainingLogs | None)]): each plotted variable gets its
        curve in every one, and so do the logged tags; a run that left takes its curves along."""
        names = self.session.run_names()
        self.runs.runs[0].name = names[0]  # with its parent's name once a run beside it has the same
        gone = self.runs.set_beside([(run.path, name, run.checkpoints)
                                     for name, (run, _) in zip(names[1:], comparisons)])
        for run in gone:
            for series in run.series.values():
                self.plot.removeItem(series["curve"])
                self.legend.removeItem(series["curve"])
        self.logged.set_runs(1)
        for index, (run, logs) in enumerate(comparisons, start=1):
            self.logged.set_logs(index, logs, run.checkpoints)
        self._find_stepless()
        self.toolbar.set_shown(self.runs.button, self.runs.comparing)
        for plotted in self.runs.runs[1:]:
            for name, first in self.series.items():
                if name not in plotted.series:
                    plotted.series[name] = self._new_series(name, first["label"], plotted)
                    self._compute(name, plotted)
        for name in self.series:
            self._restyle(name)
        self.logged.redraw()
        self._relegend()

    def _new_series(self, name: str, label: str, plotted) -> dict:
        curve = self.plot.plot([], [], name=label, symbolSize=6)
        curve.sigPointsClicked.connect(self._points_clicked)
        curve.setCurveClickable(True)
        return {"name": name, "label": label, "points": {}, "curve": curve, "run": plotted,
                "number": len(self.series)}

    def add_variable(self, name: str, label: str) -> None:
        if name in self.series:
            return
        self.evidence.clear()
        if not self.series:
            self.plot.setTitle(None)
            self.plot.enableAutoRange()  # the hint's neutral axes gave way to the data
        for plotted in self.runs.runs:
            plotted.series[name] = self._new_series(name, label, plotted)
        self._restyle(name)
        self._relegend()
        for plotted in self.runs.runs:
            self._compute(name, plotted)
        if self.view_choice.currentIndex() > 0 and len(self.series) == 1:
            self._view_changed()  # the distribution is of the first variable: later ones do not change it

    def _restyle(self, name: str) -> None:
        """Colour by variable; with runs beside the window's, colour by run and a symbol per variable. A
        run unchecked in the run list: its curve hidden."""
        number = self.series[name]["number"]
        symbol = _SYMBOLS[number % len(_SYMBOLS)] if self.comparing else "o"
        metric_shown = self.view_choice.currentIndex() == 0
        for plotted in self.runs.runs:
            each = plotted.series.get(name)
            if each is None:
                continue
            colour = plotted.colour if self.comparing else _COLOURS[number % len(_COLOURS)]
            curve = each["curve"]
            curve.setPen(pg.mkPen(colour, width=2))
            curve.setSymbol(symbol)
            curve.setSymbolBrush(colour)
            curve.setSymbolPen(colour)
            curve.setVisible(plotted.shown and metric_shown)

    def _relegend(self) -> None:
        """The legend's rows: each variable's curve while the window's run is alone; else a row per
        variable (its symbol) and per run shown (its colour). The logged tags' rows come last."""
        for key in getattr(self, "_legend_keys", []):
            self.legend.removeItem(key)
        for series, _ in self._all_series():
            self.legend.removeItem(series["curve"])
        self._legend_keys = []
        if not self.comparing:
            for series in self.series.values():
                self.legend.addItem(series["curve"], series["label"])
        else:
            for name, series in self.series.items():
                symbol = _SYMBOLS[series["number"] % len(_SYMBOLS)]
                self._legend_keys.append((pg.PlotDataItem([], [], pen=None, symbol=symbol, symbolBrush="#bbb",
                                                          symbolPen="#bbb"), series["label"]))
            for _, plotted in self.runs.shown():
                self._legend_keys.append((pg.PlotDataItem([], [], pen=pg.mkPen(plotted.colour, width=3)), plotted.name))
            for key, label in self._legend_keys:
                self.legend.addItem(key, label)
            self._legend_keys = [key for key, _ in self._legend_keys]
        self.logged.relegend()

    def _runs_shown_changed(self) -> None:
        """A run checked or unchecked in the run list: its curves and logged curves shown or hidden."""
        self.pointer.clear()
        for name in self.series:
            self._restyle(name)
        self.logged.redraw()
        self._relegend()

    def _remove_curves(self) -> None:
        for plotted in self.runs.runs:
            for series in plotted.series.values():
                self.plot.removeItem(series["curve"])
                self.legend.removeItem(series["curve"])
            plotted.series = {}
        self._relegend()

    def plotted_series(self):
        """(series, its run's checkpoints) of every curve of a run shown, the window's run first."""
        for name in self.series:
            for _, plotted in self.runs.shown():
                if name in plotted.series:
                    yield plotted.series[name], plotted.checkpoints

    def _all_series(self):
        """(series, checkpoints) of every curve, shown or not (drawn again when the axis changes)."""
        for plotted in self.runs.runs:
            for series in plotted.series.values():
                yield series, plotted.checkpoints
