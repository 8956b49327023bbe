"""The trajectory room: metrics of variables over the run's checkpoints, logged curves beside them, the
distribution over steps and the plot's pointer."""
