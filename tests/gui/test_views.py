"""Image tests of the main views: tests/gui/views.py renders them offscreen on a 1366x768 screen (every
view), and on a 1920x1080 one and the laptop at scale factor 1.5 (the main views), each in its own process
(a screen's size is fixed when Qt starts; the three run side by side), and each picture must match the
docs/window.md's screenshot of it (docs/screenshots/SCREEN/VIEW.png) under a tolerance. Text is drawn with the
fonts the app ships and no other (fontconfig is pointed at resources/fonts alone), and Qt and pyqtgraph are
pinned, so the comparison runs on every machine: it never skips. A changed view fails with a diff image;
when the change is meant, `python -m tests.gui.views --update` renders the screenshots anew (look at them
before committing)."""
import json
import subprocess
import sys
import time

import pytest

from tests.graph_fixtures import cached_cases
from tests.gui.image_compare import compare, pixels
from tests.gui.views import ENVIRONMENT, SCREENS, SCREENSHOTS
from tests.locations import ROOT


@pytest.fixture(scope="module")
def renders(tf_ckpts, compare_cases, training_runs, tmp_path_factory):
    """Every screen rendered at once, each by its own process (a screen's size is fixed when Qt starts):
    much of a render waits for Qt's event loop to settle, so side by side the three take little more
    than the longest alone. {size: (its folder of pictures, the process's exit status, its stderr)}."""
    root = tmp_path_factory.mktemp("views")
    graphs = cached_cases(tmp_path_factory)
    started = {}
    for size in sorted(SCREENS):
        out, log = root / size, open(root / f"{size}.stderr", "w+")
        started[size] = (out, log, subprocess.Popen(
            [sys.executable, "-m", "tests.gui.views", "--size", size, "--out", str(out),
             "--many-vars", str(tf_ckpts.many_vars), "--keras-run", str(tf_ckpts.keras_run),
             "--renamed", str(compare_cases.renamed_ckpt), str(compare_cases.renamed_meta),
             "--training", str(training_runs.tf2_run.parent), "--graph-run", str(graphs.tf1_run)],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log, text=True))
    deadline = time.monotonic() + 600
    finished = {}
    for size, (out, log, process) in started.items():
        try:
            process.wait(max(deadline - time.monotonic(), 1))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.seek(0)
        finished[size] = (out, process.returncode, log.read())
        log.close()
    return finished


@pytest.mark.parametrize("size", sorted(SCREENS))
def test_the_views_look_as_their_screenshots(size, renders, tmp_path, qapp):
    out, returncode, stderr = renders[size]
    assert returncode == 0, f"the render ended with {returncode}: {stderr[-2000:]}"
    here, there = (json.loads((folder / ENVIRONMENT).read_text()) for folder in (out, SCREENSHOTS / size))
    assert here == there, "the pinned Qt, pyqtgraph and bundled fonts must draw the views: rendered with " \
                          f"{here}, the screenshots with {there}"
    problems = []
    width, height, _, views = SCREENS[size]
    for view in views:
        rendered, stored = out / f"{view}.png", SCREENSHOTS / size / f"{view}.png"
        assert abs(pixels(rendered).shape[1] - width) <= 1 and abs(pixels(rendered).shape[0] - height) <= 1, \
            f"{view} is not the size of the screen"
        problem = compare(rendered, stored, tmp_path / f"{size}-{view}-diff.png")
        if problem:
            problems.append(problem)
    assert not problems, "\n".join(problems + [f"rendered pictures in {out}"])


def test_a_moved_dock_is_caught(tmp_path, qapp):
    """The comparison can fail: the browse view with its Variable dock drawn 60 px further left."""
    from PySide6.QtGui import QImage, QPainter

    stored = SCREENSHOTS / "1366x768" / "browse.png"
    image = QImage(str(stored))
    moved = QImage(image)
    painter = QPainter(moved)
    painter.drawImage(836, 0, image.copy(896, 0, 470, 768))
    painter.end()
    moved.save(str(tmp_path / "moved.png"))
    problem = compare(tmp_path / "moved.png", stored, tmp_path / "diff.png")
    assert problem and "of the pixels changed" in problem and (tmp_path / "diff.png").exists()
    assert compare(stored, stored, tmp_path / "same.png") is None
