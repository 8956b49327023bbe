"""The window on real screens with a window manager (Xvfb and openbox, started here; skipped where they
are not installed — .ci/run installs them): a window used on a 1920x1080 monitor, and one opened fresh,
reopen inside a 1366x768 laptop screen, at scale factor 1 and 1.5, status bar (progress and cancel) in
sight. Offscreen Qt clamps windows to the screen itself, so only a real X server shows the fault."""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from tests.locations import ROOT

from checkpoint_inspector.gui.base.system_libraries import missing_packages

pytestmark = pytest.mark.skipif(not (shutil.which("Xvfb") and shutil.which("openbox")) or bool(missing_packages()),
                                reason="needs Xvfb, openbox and Qt's X11 libraries (apt-get install xvfb openbox ...)")


class XScreen:
    """An X server of one screen with openbox managing its windows."""

    def __init__(self, width: int, height: int):
        read, write = os.pipe()
        self.server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", f"{width}x{height}x24",
                                        "-nolisten", "tcp"], pass_fds=(write,), stderr=subprocess.DEVNULL)
        os.close(write)
        with os.fdopen(read) as f:
            self.display = f":{f.readline().strip()}"
        self.manager = subprocess.Popen(["openbox"], env=dict(os.environ, DISPLAY=self.display),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # openbox takes the screen before the first window maps

    def probe(self, settings, tmp_path, geometry=None, scale=None, second=False) -> dict:
        env = dict(os.environ, DISPLAY=self.display, QT_QPA_PLATFORM="xcb", CHECKPOINT_INSPECTOR_DATA=str(tmp_path / "data"))
        env.pop("QT_SCALE_FACTOR", None)
        if scale:
            env["QT_SCALE_FACTOR"] = str(scale)
        command = [sys.executable, "-m", "tests.gui.window.screen_fit_probe", str(settings)]
        command += ["--second"] if second else []
        result = subprocess.run(command + (["--geometry", geometry] if geometry else []), cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr[-2000:]
        return json.loads(result.stdout.strip().splitlines()[-1])

    def close(self) -> None:
        for process in (self.manager, self.server):
            process.terminate()
            process.wait(10)


def assert_inside(report: dict) -> None:
    x, y, width, height = report["available"]
    fx, fy, fw, fh = report["frame"]
    assert x <= fx and y <= fy and fx + fw <= x + width and fy + fh <= y + height, f"frame {report['frame']} " \
        f"is not inside the screen's {report['available']}"
    sx, sy, sw, sh = report["status_bar"]
    assert sy + sh <= y + height and sx >= x, f"the status bar {report['status_bar']} is off the screen"


@pytest.fixture(scope="module")
def screens():
    big, laptop = XScreen(1920, 1080), XScreen(1366, 768)
    yield big, laptop
    big.close()
    laptop.close()


@pytest.mark.parametrize("scale", [None, 1.5])
def test_a_window_used_on_a_big_screen_reopens_inside_a_laptop_screen(screens, tmp_path, scale):
    big, laptop = screens
    settings = tmp_path / "settings.ini"
    used = big.probe(settings, tmp_path, geometry="10,10,1900,1040")
    assert used["frame"][2] >= 1800  # it was big there
    assert_inside(laptop.probe(settings, tmp_path, scale=scale))


@pytest.mark.parametrize("scale", [None, 1.5])
def test_a_first_window_fits_the_laptop_screen(screens, tmp_path, scale):
    _, laptop = screens
    assert_inside(laptop.probe(tmp_path / "fresh.ini", tmp_path, scale=scale))


def test_a_second_window_is_cascaded_inside_the_laptop_screen(screens, tmp_path):
    """A second window sits right of and below the first, both in sight, its frame on the screen whole."""
    _, laptop = screens
    report = laptop.probe(tmp_path / "two.ini", tmp_path, second=True)
    assert_inside(report)
    assert report["frame"][0] > report["first_frame"][0] and report["frame"][1] > report["first_frame"][1]
