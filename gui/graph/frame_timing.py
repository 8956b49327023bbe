"""How long the Graph view takes to draw a frame while it pans and zooms: the benchmark's hook
(tests/benchmarks/bench_graph.py) and the measure behind the view's drawing settings.

Each frame moves the view (a pan step, and a zoom step every fourth frame, in and out around the
starting scale so the scene stays in view), then repaints the whole viewport at once (repaint() draws
before it returns, as a frame on screen would be drawn) and the time of the move and the repaint is
counted. The median frame is reported (one slow frame of a busy machine does not make the figure).
"""
from __future__ import annotations

import statistics
import time


def measure_frames(view, frames: int = 120, pan_pixels: int = 12) -> float:
    """Milliseconds per frame (median over `frames`) of `view` (a QGraphicsView, shown) panning and
    zooming; the view is put back where it was."""
    from PySide6.QtWidgets import QApplication

    transform = view.transform()
    h, v = view.horizontalScrollBar(), view.verticalScrollBar()
    start = (h.value(), v.value())
    QApplication.processEvents()
    times = []
    direction = 1
    for frame in range(frames):
        began = time.perf_counter()
        if frame % 4 == 3:
            view.scale(1.02 if (frame // 4) % 2 == 0 else 1 / 1.02, 1.02 if (frame // 4) % 2 == 0 else 1 / 1.02)
        else:
            if not h.minimum() < h.value() + direction * pan_pixels < h.maximum():
                direction = -direction
            h.setValue(h.value() + direction * pan_pixels)
        view.viewport().repaint()
        times.append((time.perf_counter() - began) * 1000)
    view.setTransform(transform)
    h.setValue(start[0])
    v.setValue(start[1])
    return statistics.median(times)


def benchmark_frames(path: str, visible: int = 5000, frames: int = 120) -> float:
    """The benchmark's figures (tests/benchmarks/bench_graph.py runs it in a process of its own): the time from
    loading the graph at `path` to its top level drawn, then that graph in a Graph window of 1366x768 with no
    checkpoint, groups opened breadth first until at least
    `visible` items are drawn, the whole of it fitted in the view; prints and returns ms per frame."""
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from checkpoint_inspector.core.analysis.graph.hierarchy import ROOT

    from .graph_window import GraphWindow

    app = QApplication.instance() or QApplication([])

    class NoCheckpoint:
        current = None

    def wait(signal) -> None:
        loop = QEventLoop()
        signal.connect(loop.quit)
        QTimer.singleShot(120_000, loop.quit)
        loop.exec()

    window = GraphWindow(NoCheckpoint(), lambda infos: None, lambda: None)
    window.resize(1366, 768)
    window.show()
    began = time.perf_counter()
    window.load(str(path))  # what the menu's click does, igraph not yet imported in this process
    wait(window.graph_shown)
    print(f"the Graph window from load to its top level drawn: {time.perf_counter() - began:.2f} s")
    tree = window.tree
    queue = [child for child in tree.children(ROOT) if tree[child].expandable]
    while len(window.scene.boxes) < visible and queue:
        group = queue.pop(0)
        window.open_groups([group])
        wait(window.placed)
        queue += [child for child in tree.children(group) if tree[child].expandable]
    window.view.fit()
    app.processEvents()
    milliseconds = measure_frames(window.view, frames)
    print(f"the Graph view panning and zooming with {len(window.scene.boxes):,} items in view: "
          f"{milliseconds:.1f} ms a frame ({1000 / milliseconds:.0f} frames a second; median of {frames})")
    window.close()
    return milliseconds
