"""The compare room: two checkpoints side by side, and the check of one against the program that must
restore it."""
