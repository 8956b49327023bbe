"""The scripting face: `main.py COMMAND ...` (the contract is in shared/docs/design.md). It sits in core
because it is Qt-free and ships with the engine; it is the top layer, and nothing in core imports it."""
