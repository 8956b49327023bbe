"""The browser room: the variable tree and table with their filter, and the run's checkpoint list."""
