"""Offscreen screens of a chosen size: Qt's offscreen platform reads its screens from a JSON file named
in QT_QPA_PLATFORM, so GUI tests and the view renderer can lay the window out on a 1366x768 laptop or a
1920x1080 monitor without a display."""
from __future__ import annotations

import json
import os
import tempfile

LAPTOP = (1366, 768)
FULL_HD = (1920, 1080)


def offscreen_platform(width: int, height: int) -> str:
    """The QT_QPA_PLATFORM value for one offscreen screen of width x height at 96 dpi."""
    config = {"synchronousWindowSystemEvents": False, "windowFrameMargins": False,
              "screens": [{"name": f"screen-{width}x{height}", "x": 0, "y": 0, "width": width, "height": height,
                           "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}
    path = os.path.join(tempfile.gettempdir(), f"checkpoint-inspector-screen-{width}x{height}.json")
    temporary = f"{path}.{os.getpid()}"
    with open(temporary, "w") as f:  # written whole then renamed: parallel test runs may share it
        json.dump(config, f)
    os.replace(temporary, path)
    return f"offscreen:configfile={path}"
