"""The engine of Checkpoint Inspector: reading TensorFlow checkpoints without TensorFlow.

Nothing in this package imports Qt, pyqtgraph or the gui package (a test enforces it), and nothing
here imports TensorFlow at module level. The GUI, the CLI and the tests all drive this same code.
"""
