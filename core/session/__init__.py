"""What a person has open, as plain Python: the run and the checkpoint shown, the selection, each run's edit
plan and its undo history, where saves go. The window wraps it in a thin Qt adapter (gui/session.py) that
turns its events into signals for the rooms; the Python API and tests drive it directly, without Qt."""
