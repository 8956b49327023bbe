"""Numbers about tensors and runs: statistics, trajectories and distributions across checkpoints, and the
2-D slicing of a tensor for display. Built on core.run and core.format."""
