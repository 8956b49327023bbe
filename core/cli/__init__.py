"""The scripting face: `main.py COMMAND ...` (the contract is docs/cli.md). It sits in core
because it is Qt-free and ships with the engine; it is the top layer, and nothing in core imports it."""

# The commands' names, here so that main.py tells a command from a path without importing the commands.
COMMANDS = ("list", "steps", "show", "trajectory", "export-csv", "export", "remap", "convert", "tensorboard", "diff",
            "check", "scalars", "overview", "diagnose", "graph")
