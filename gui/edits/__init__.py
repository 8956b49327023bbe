"""The edits room: the remap plan of a run (rename, drop, cast, set values), its preview and its save."""
