"""The main views of the window rendered offscreen on a screen of a chosen size: docs/window.md's screenshots
and the image tests' references are the same files (docs/screenshots/WIDTHxHEIGHT/VIEW.png), so the
pictures in docs/window.md are always the window as it is.

    .venv/bin/python -m tests.gui.views --size 1366x768 --out docs/screenshots/1366x768
    .venv/bin/python -m tests.gui.views --update      # every screen into docs/screenshots (writes many_vars)

Screens: a 1366x768 laptop (every view), and the main views on a 1920x1080 monitor and on the laptop at
scale factor 1.5 (QT_SCALE_FACTOR: a 911x512 screen in Qt's pixels, drawn on 1366x768 device pixels).
Text is drawn with the fonts the app ships and nothing else (gui.base.fonts.use_only_bundled_fonts), so
the pictures come out the same whatever fonts the machine has.

Views: browse (the sample run, a kernel's values, four trajectories), heatmap, histogram, distribution,
rename (the regex rename dialog over the Edits dock on the 4,000-variable run), error (a corrupt file's
message), damaged (a truncated shard marked in the Run list) and keras (a folder of Keras ModelCheckpoint
files: a .keras's kernel over the epochs), compare (the sample run's first and last checkpoints side by
side, a kernel's heatmaps in both and of their difference) and check (a TF1 checkpoint checked against
the .meta of its renamed graph, with the proposed plan); training, overview, diagnosis (Tools > Diagnose Run
on the exploding training run, a finding picked and its evidence plotted) and two_runs; graph (Tools > Graph of
the Run on a TF1 run with its .meta: a variable found, its scopes opened, the update-ratio overlay). Everything that could differ between two
renders is fixed: the sample run is copied with fixed modification times, the corrupt file has fixed
bytes, settings go to a temporary file, the window fills the screen.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "docs" / "screenshots"
ENVIRONMENT = "environment.json"  # beside the pictures: what they were rendered with
VIEWS = ("browse", "heatmap", "histogram", "distribution", "rename", "error", "damaged", "keras", "compare", "check",
         "training", "overview", "diagnosis", "two_runs", "graph")
MAIN_VIEWS = ("browse", "rename", "compare", "training", "overview", "graph")  # browse, edits, compare, trajectory, overview, graph
# screen name -> (width, height, scale factor, the views rendered there)
SCREENS = {"1366x768": (1366, 768, 1.0, VIEWS), "1920x1080": (1920, 1080, 1.0, MAIN_VIEWS),
           "1366x768-scale1.5": (1366, 768, 1.5, MAIN_VIEWS)}
FIXED_MTIME = 1_796_040_000  # 2026-12-01 09:20 UTC: the Run list's "Written" column reads the same each time
KERNEL = "optimizer/_trainable_variables/2/.ATTRIBUTES/VARIABLE_VALUE"  # hidden_2/kernel, 16x16
PLOTTED = (KERNEL, "optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE",
           "optimizer/_trainable_variables/4/.ATTRIBUTES/VARIABLE_VALUE",
           "optimizer/_trainable_variables/1/.ATTRIBUTES/VARIABLE_VALUE")


class _Render:
    """What must outlive render()'s frame: the QApplication it made and the garbage collector's timer."""

    app = None
    collector = None


_render = _Render()


def render(out: Path, many_vars: Path | None, views=VIEWS, keras_run: Path | None = None,
           renamed: tuple[Path, Path] | None = None, training: Path | None = None,
           graph_run: Path | None = None) -> list[Path]:
    """Render `views` into `out` with the QApplication of this process (its screen sets the size)."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is None:
        _render.app = QApplication([])
    from checkpoint_inspector.gui.base.garbage_collection import GarbageCollection

    _render.collector = GarbageCollection()  # garbage collected in the GUI thread, as in the app
    from checkpoint_inspector.gui.base import dialogs, errors
    from checkpoint_inspector.gui.window.main_window import MainWindow
    from checkpoint_inspector.gui.base.settings import AppSettings

    out.mkdir(parents=True, exist_ok=True)
    (out / ENVIRONMENT).write_text(json.dumps(render_environment(), indent=1, sort_keys=True) + "\n")
    scratch = Path(tempfile.mkdtemp(prefix="views-"))
    shown_errors = []
    errors.show_error = lambda parent, title, message, details="": shown_errors.append((title, message))
    dialogs.ask_yes_no = lambda parent, title, question, **_: True
    # the rename view's plan is left unsaved: the next open and the close discard it without a modal box
    dialogs.ask_save_discard_cancel = lambda parent, title, question: "discard"
    window = MainWindow(AppSettings(QSettings(str(scratch / "settings.ini"), QSettings.IniFormat)))
    window.setGeometry(window.screen().availableGeometry())  # what a maximised window gets
    window.show()
    written = []

    def save(name, picture=None):
        if name in views:
            path = out / f"{name}.png"
            (picture or window.grab()).save(str(path))
            written.append(path)

    run = _fixed_copy(scratch / "sample_run")
    _open(window, run)
    window.browser.select_name(KERNEL)
    _wait(window.detail.shown)
    for name in PLOTTED:
        window.plot_variables([v for v in window.session.current.variables if v.name == name])
        _wait(window.trajectory.updated)
    _wait()
    save("browse")
    for tab, name in ((1, "heatmap"), (2, "histogram")):
        window._show_tab(tab)
        _wait()
        save(name)
    window._show_tab(0)
    if "distribution" in views:
        window.trajectory.view_choice.setCurrentIndex(1)
        _wait(window.trajectory.updated)
        _wait()
        save("distribution")
        window.trajectory.view_choice.setCurrentIndex(0)  # back to the metric: nothing to compute

    if "rename" in views and many_vars is not None:
        _open(window, _fixed_copy(scratch / "many_vars", many_vars.parent) / many_vars.name)
        save("rename", _rename_dialog_over(window))

    if "error" in views:
        broken = scratch / "model.ckpt-500.index"
        broken.write_bytes(bytes(range(256)) * 8)
        window.open_path(str(broken))
        _wait(window.session.load_failed)
        _wait(ms=100)
        save("error", _message_over(window, *shown_errors[-1]))

    if "damaged" in views:
        damaged = _fixed_copy(scratch / "damaged_run")
        with open(damaged / "ckpt-150.data-00000-of-00001", "r+b") as f:
            f.truncate(1000)
        window.open_path(str(damaged))
        _wait(window.session.checkpoint_loaded)
        _wait(window.run_panel.checked)
        _wait()
        save("damaged")
    if "keras" in views and keras_run is not None:
        _keras_view(window, _fixed_copy(scratch / "keras_run", keras_run))
        save("keras")
    if "compare" in views:
        save("compare", _compare_view(window, scratch))
    if "check" in views and renamed is not None:
        save("check", _check_view(window, scratch, *renamed))
    if training is not None:
        _training_views(window, scratch, training, views, save)
    if "graph" in views and graph_run is not None:
        save("graph", _graph_view(window, _fixed_copy(scratch / "graph_run", graph_run)))
    window.close()
    shutil.rmtree(scratch, ignore_errors=True)
    return written


def render_environment() -> dict:
    """What decides the pixels besides our code: Qt, pyqtgraph and the fonts the window is drawn with.
    The image tests compare pictures only where these are the ones the screenshots were rendered with."""
    import PySide6
    import pyqtgraph
    from PySide6.QtCore import qVersion
    from PySide6.QtGui import QFontDatabase, QFontInfo
    from PySide6.QtWidgets import QApplication

    font = QFontInfo(QApplication.font())
    fixed = QFontInfo(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    return {"qt": qVersion(), "pyside": PySide6.__version__, "pyqtgraph": pyqtgraph.__version__,
            "font": [font.family(), font.pointSize(), font.styleName()], "fixed_font": fixed.family(),
            "font_families": sorted(QFontDatabase.families())}


def _fixed_copy(destination: Path, source: Path | None = None) -> Path:
    from tests.locations import SAMPLE_RUN

    shutil.copytree(source or SAMPLE_RUN, destination)
    for path in destination.iterdir():
        os.utime(path, (FIXED_MTIME, FIXED_MTIME))
    return destination


def _keras_view(window, run: Path) -> None:
    """A folder of ModelCheckpoint files: the last epoch's .keras, its dense kernel over the epochs."""
    _open(window, run / "epoch_03.keras")
    window.trajectory.clear()
    kernel = next(v for v in window.session.current.variables if v.display_name == "hidden/kernel")
    window.browser.select_name(kernel.name)
    _wait(window.detail.shown)
    window.plot_variables([kernel])
    _wait(window.trajectory.updated)
    window._show_tab(1)
    _wait()


def _compare_view(window, scratch: Path):
    """The sample run's first and last checkpoints in a Compare window the size of the screen, a kernel
    picked: its heatmaps in A and B and of A − B."""
    run = _fixed_copy(scratch / "compare_run")
    compare = window.comparing.compare(str(run / "ckpt-100"), str(run / "ckpt-300"))
    compare.setGeometry(window.screen().availableGeometry())
    _wait(compare.compared)
    row = next(r for r in range(compare.proxy.rowCount()) if compare.proxy.index(r, 1).data().endswith("hidden_2/kernel"))
    compare.table.selectRow(row)
    _wait(ms=1500)
    picture = compare.grab()
    compare.close()
    return picture


def _check_view(window, scratch: Path, checkpoint: Path, meta: Path):
    """A TF1 checkpoint checked against the .meta of its renamed graph: the report and its plan."""
    folder = scratch / "check"
    folder.mkdir()
    for path in checkpoint.parent.iterdir():
        if path.name == "checkpoint":  # its absolute paths name the fixture's folder, not this copy
            continue
        shutil.copy(path, folder / path.name)
        os.utime(folder / path.name, (FIXED_MTIME, FIXED_MTIME))
    _open(window, folder / checkpoint.name)
    dialog = window.comparing.check_against(str(folder / meta.name))
    _wait(ms=1500)
    picture = _drawn_over(window, dialog)
    return picture


def _training_copy(destination: Path, source: Path) -> Path:
    """A TensorFlow-written training run with fixed times: its state file written anew without the
    save times TensorFlow put in (the Run list shows them)."""
    from checkpoint_inspector.core.format.checkpoint_state import write_state_file
    from checkpoint_inspector.core.run.discovery import discover

    shutil.copytree(source, destination)
    write_state_file(str(destination), [c.prefix for c in discover(str(destination)).checkpoints])
    for path in destination.iterdir():
        os.utime(path, (FIXED_MTIME, FIXED_MTIME))
    return destination


def _training_views(window, scratch: Path, training: Path, views, save) -> None:
    """training, overview, diagnosis and two_runs (tests.training_fixtures' runs under `training`)."""
    exploding = _training_copy(scratch / "exploding_run", training / "exploding_run")
    _open(window, exploding)
    window._show_tab(0)  # the values, whichever tab the views before left open
    window.trajectory.clear()
    window.trajectory.metric_choice.setCurrentText("update_ratio")
    window.trajectory.log_scale.setChecked(True)  # a ratio that jumps a hundredfold
    for label in ("layer_4/kernel", "layer_3/kernel", "layer_0/kernel"):
        window.plot_variables([v for v in window.session.current.variables if v.display_name == label])
        _wait(window.trajectory.updated)
    window.browser.select_name(next(v.name for v in window.session.current.variables if v.display_name == "layer_4/kernel"))
    _wait(window.detail.shown)
    _wait(ms=600)
    save("training")
    if "overview" in views:
        overview = window.training.show_overview()
        overview.setGeometry(window.screen().availableGeometry())
        _wait(overview.computed)
        overview.sort.setCurrentIndex(2)  # the largest jump first: the exploding layer
        _wait()
        save("overview", overview.grab())
        overview.close()
    if "diagnosis" in views:
        save("diagnosis", _diagnosis_view(window))
    if "two_runs" in views:
        first = _training_copy(scratch / "seed_1", training / "tf2_run")
        second = _training_copy(scratch / "seed_2", training / "tf2_run_b")
        _open(window, first)
        window.trajectory.clear()
        window.trajectory.metric_choice.setCurrentText("l2")
        window.training.open_comparison(str(second))
        _wait(ms=1500)
        for label in ("dense/kernel", "out/kernel"):
            window.plot_variables([v for v in window.session.current.variables if v.display_name == label])
            _wait(window.trajectory.updated)
        _wait(ms=600)
        save("two_runs")
        window.training.remove_comparison()
    window.trajectory.log_scale.setChecked(False)


def _diagnosis_view(window):
    """Tools > Diagnose Run on the exploding run, its runaway-scale finding picked: the Diagnosis window
    drawn framed over the top right of the main window, whose Trajectory dock plots the finding's evidence."""
    from PySide6.QtCore import QRect, Qt
    from PySide6.QtGui import QColor, QPainter, QPen

    diagnosis = window.diagnosing.show()
    screen = window.screen().availableGeometry()
    diagnosis.resize(int(screen.width() * 0.62), int(screen.height() * 0.5))
    _wait(diagnosis.diagnosed)
    kinds = [diagnosis.findings.topLevelItem(row).text(1) for row in range(diagnosis.findings.topLevelItemCount())]
    diagnosis.choose(kinds.index("runaway_scale"))
    _wait(ms=600)
    picture = window.grab()
    shot = diagnosis.grab()
    painter = QPainter(picture)
    title_height = 24  # a plain frame and title bar, as a window manager would draw them
    left, top = picture.width() - shot.width() - 16, 40
    frame = QRect(left - 1, top - title_height - 1, shot.width() + 2, shot.height() + title_height + 2)
    painter.fillRect(frame, QColor("#3c3f41"))
    painter.setPen(QColor("#ffffff"))
    painter.drawText(QRect(left + 8, top - title_height, shot.width() - 16, title_height),
                     Qt.AlignVCenter | Qt.AlignLeft, diagnosis.windowTitle())
    painter.drawPixmap(left, top, shot)
    painter.setPen(QPen(QColor("#3c3f41"), 1))
    painter.drawRect(frame)
    painter.end()
    diagnosis.close()
    return picture


def _graph_view(window, run: Path):
    """Tools ▸ Graph of the Run on the TF1 run of tests.graph_fixtures (its .meta beside the checkpoints), the
    Graph window the size of the screen: `hidden/weights` found and revealed, the update-ratio overlay on."""
    _open(window, run)
    graph = window.graphing.show_graph()
    graph.setGeometry(window.screen().availableGeometry())
    _wait(graph.graph_shown)
    graph.search.setText("hidden/weights")
    graph.reveal(graph.tree.find("hidden/weights")[0])
    _wait(graph.placed)
    if graph.selected_id() not in graph._facts:  # its consumers and attributes, read on a worker
        _wait(graph.described)
    graph.overlay.metric.setCurrentIndex(1)
    _wait(graph.overlay_shown)
    _wait(ms=600)
    picture = graph.grab()
    graph.close()
    return picture


def _open(window, path) -> None:
    window.open_path(str(path))
    _wait(window.session.checkpoint_loaded)
    _wait()


def _rename_dialog_over(window):
    """The Edits dock with a plan, and the regex rename dialog at its first size, drawn over the window."""
    from checkpoint_inspector.core.edit.operations import Cast, RegexRename
    from checkpoint_inspector.gui.edits.batch_rename_dialog import BatchRenameDialog

    window.session.push(RegexRename(pattern="^encoder/", replacement="model/encoder/"))
    window.session.push(Cast(pattern="layer_norm", dtype="bfloat16"))
    window.edits_dock.raise_()
    dialog = BatchRenameDialog(window.edits.plan, window.session.current.variables, window)
    dialog.pattern.setText(r"/block_(\d+)/")
    dialog.replacement.setText(r"/layer_\1/")
    picture = _drawn_over(window, dialog)
    window.detail_dock.raise_()
    return picture


def _message_over(window, title: str, message: str):
    from PySide6.QtWidgets import QMessageBox

    return _drawn_over(window, QMessageBox(QMessageBox.Critical, title, message, QMessageBox.Ok, window))


def _drawn_over(window, dialog):
    """The window's picture with `dialog` drawn where a window manager would centre it (offscreen, a
    window's grab() holds only itself); the dialog is closed after."""
    from PySide6.QtGui import QPainter

    dialog.show()
    _wait()
    picture = window.grab()
    painter = QPainter(picture)
    shot = dialog.grab()
    painter.drawPixmap((picture.width() - shot.width()) // 2, (picture.height() - shot.height()) // 3, shot)
    painter.end()
    dialog.close()
    return picture


def _wait(signal=None, ms: int = 300) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    if signal is not None:
        signal.connect(loop.quit)
    QTimer.singleShot(ms if signal is None else 30000, loop.quit)
    loop.exec()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="1366x768", choices=sorted(SCREENS), help="the offscreen screen")
    parser.add_argument("--out", type=Path, help="where the PNGs go")
    parser.add_argument("--many-vars", type=Path, help="the 4,000-variable checkpoint (tests/tf_fixtures)")
    parser.add_argument("--keras-run", type=Path, help="the ModelCheckpoint run (tests/tf_fixtures)")
    parser.add_argument("--renamed", type=Path, nargs=2, metavar=("CKPT", "META"),
                        help="a checkpoint and the .meta of its renamed graph (tests/compare_fixtures)")
    parser.add_argument("--training", type=Path, help="the training runs (tests/training_fixtures)")
    parser.add_argument("--graph-run", type=Path, help="the TF1 run with its .meta (tests/graph_fixtures)")
    parser.add_argument("--views", help="comma-separated (default: the screen's views)")
    parser.add_argument("--update", action="store_true",
                        help="render both sizes into docs/screenshots (writes the 4,000-variable run first)")
    args = parser.parse_args(argv)
    if args.update:
        import subprocess

        from tests.keras_fixtures import write_keras_run
        from tests.tf_fixtures import write_many_vars

        from tests.compare_fixtures import write_renamed_graph

        scratch = Path(tempfile.mkdtemp(prefix="views-fixtures-"))
        many_vars, keras_run = write_many_vars(scratch / "many_vars" / "many_vars"), write_keras_run(scratch / "keras_run")
        renamed = write_renamed_graph(scratch / "renamed")
        from tests.training_fixtures import write_training_runs

        training = write_training_runs(scratch / "training").tf2_run.parent
        from tests.graph_fixtures import write_tf1_run

        graph_run = write_tf1_run(scratch / "graph_run")
        for size in SCREENS:
            subprocess.run([sys.executable, "-m", "tests.gui.views", "--size", size, "--out", str(SCREENSHOTS / size),
                            "--many-vars", str(many_vars), "--keras-run", str(keras_run),
                            "--renamed", *map(str, renamed), "--training", str(training),
                            "--graph-run", str(graph_run)], check=True, cwd=ROOT)
        return 0
    from checkpoint_inspector.gui.base.fonts import use_only_bundled_fonts
    from tests.gui.screens import offscreen_platform

    width, height, scale, views = SCREENS[args.size]
    os.environ["QT_QPA_PLATFORM"] = offscreen_platform(width, height)
    if scale != 1.0:
        os.environ["QT_SCALE_FACTOR"] = str(scale)
    use_only_bundled_fonts(tempfile.mkdtemp(prefix="views-fonts-"))  # before Qt starts: no other font is seen
    views = tuple(args.views.split(",")) if args.views else views
    for path in render(args.out or SCREENSHOTS / args.size, args.many_vars, views,
                       args.keras_run, tuple(args.renamed) if args.renamed else None, args.training,
                       args.graph_run):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
