"""One metric of one variable across a run's checkpoints: the pieces read and reduced on an executor,
the side-by-side pass over consecutive checkpoints, groups of small tensors, and the records they cache."""
