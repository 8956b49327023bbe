"""Two checkpoints compared (what changed, by checksum or by values), the likely renames between them,
and whether a checkpoint restores into a program (the restore check that core.edit.fix_plan turns into a plan)."""
