"""Changing a checkpoint without touching it: typed remap operations, the plan and its preview, saving the
result to a new place, and verifying it with TensorFlow in a child process."""
