"""The bundled fonts (gui.base.fonts): on a machine with no font at all the app still draws its text with
DejaVu Sans, and the image tests' configuration lets Qt see the bundled fonts and nothing else, whatever
the machine has installed."""
import json
import subprocess
import sys
import textwrap

from checkpoint_inspector.gui.base.fonts import GENERIC_FAMILIES
from tests.locations import ROOT

_PROBE = textwrap.dedent("""
    import json, os, sys
    from PySide6.QtGui import QFontDatabase, QFontInfo
    from PySide6.QtWidgets import QApplication
    from checkpoint_inspector.gui.base.fonts import register_bundled_fonts
    app = QApplication([])
    before, font_before = sorted(QFontDatabase.families()), QFontInfo(app.font()).family()
    register_bundled_fonts(app)
    print(json.dumps({"before": before, "font_before": font_before, "font": QFontInfo(app.font()).family(),
                      "after": sorted(QFontDatabase.families())}))
""")


def _probe(tmp_path, fontconfig: str | None, bundled_only: bool = False) -> dict:
    import os

    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    if bundled_only:
        from checkpoint_inspector.gui.base.fonts import use_only_bundled_fonts

        use_only_bundled_fonts(str(tmp_path / "bundled"), env)
    elif fontconfig is not None:
        path = tmp_path / "fonts.conf"
        path.write_text(fontconfig)
        env["FONTCONFIG_FILE"] = str(path)
    result = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_machine_without_fonts_draws_with_the_bundled_ones(tmp_path):
    empty = f'<?xml version="1.0"?><fontconfig><cachedir>{tmp_path / "cache"}</cachedir></fontconfig>'
    seen = _probe(tmp_path, empty)
    assert set(seen["before"]) <= GENERIC_FAMILIES  # no font file: without ours every text would be boxes
    assert seen["font_before"] != "DejaVu Sans"
    assert seen["font"] == "DejaVu Sans" and {"DejaVu Sans", "DejaVu Sans Mono"} <= set(seen["after"])


def test_the_image_tests_see_the_bundled_fonts_alone(tmp_path):
    seen = _probe(tmp_path, None, bundled_only=True)
    real = [family for family in seen["before"] if family not in GENERIC_FAMILIES]
    assert real == ["DejaVu Sans", "DejaVu Sans Mono"], seen["before"]
    assert seen["font"] == "DejaVu Sans"
