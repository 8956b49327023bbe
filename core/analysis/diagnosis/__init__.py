"""What went wrong in a run's training, from its checkpoints alone: the data gathered (the overview's
table and a few tensors), the rules that read it, and the findings they make."""
