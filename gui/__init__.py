"""The PySide6 face of Checkpoint Inspector: windows, item models, dialogs and plots over core.

Thin by design: it asks core, shows the answer, and runs core jobs on worker threads. It never parses
a checkpoint file itself.
"""
