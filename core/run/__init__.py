"""A run as a person sees it: discovery of its checkpoints and steps, watching for new ones, loading one
checkpoint, its variables with kinds and friendly names, filtering and resolving names. Built on
core.format only."""
