"""The engine of Checkpoint Inspector: reading, analysing, editing and exporting TensorFlow checkpoints
without TensorFlow.

Sub-packages are layers, each importing only those below it (contracts in .importlinter):
cli > tensorboard > edit | export > analysis > run > format > the modules here (errors, jobs,
formatting, atomic_write). Nothing in this package imports Qt, pyqtgraph or the gui package, and
nothing imports TensorFlow at module level. The GUI, the CLI and the tests all drive this same code.
"""
