"""Where things are in the checkout, for tests that run the app's own files (main.py, the sample run)."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAIN = ROOT / "main.py"
SAMPLE_RUN = ROOT / "resources" / "sample_run"
