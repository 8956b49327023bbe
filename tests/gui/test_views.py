"""Image tests of the main views: tests/gui/views.py renders them offscreen on a 1366x768 and on a
1920x1080 screen, each in its own process (a screen's size is fixed when Qt starts), and each picture
must match the README's screenshot of it (docs/screenshots/SIZE/VIEW.png) under a tolerance, on a machine
that draws with the same Qt, pyqtgraph and fonts (else the test says so and skips). A changed view fails
with a diff image; when the change is meant, `python -m tests.gui.views --update` renders the
screenshots anew (look at them before committing)."""
import json
import subprocess
import sys

import pytest

from tests.gui.image_compare import compare, pixels
from tests.gui.views import ENVIRONMENT, SCREENSHOTS, VIEWS
from tests.locations import ROOT


@pytest.mark.parametrize("size", ["1366x768", "1920x1080"])
def test_the_views_look_as_their_screenshots(size, tf_ckpts, compare_cases, training_runs, tmp_path, qapp):
    out = tmp_path / size
    result = subprocess.run([sys.executable, "-m", "tests.gui.views", "--size", size, "--out", str(out),
                             "--many-vars", str(tf_ckpts.many_vars), "--keras-run", str(tf_ckpts.keras_run),
                             "--renamed", str(compare_cases.renamed_ckpt), str(compare_cases.renamed_meta),
                             "--training", str(training_runs.tf2_run.parent)], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    here, there = (json.loads((folder / ENVIRONMENT).read_text()) for folder in (out, SCREENSHOTS / size))
    if here != there:  # other fonts or another Qt draw other pixels: nothing to compare
        pytest.skip(f"the screenshots were rendered with {there}, this machine renders with {here}")
    problems = []
    for view in VIEWS:
        rendered, stored = out / f"{view}.png", SCREENSHOTS / size / f"{view}.png"
        width, height = (int(n) for n in size.split("x"))
        assert pixels(rendered).shape == (height, width, 3), f"{view} is not the size of the screen"
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
