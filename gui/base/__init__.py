"""What every room of the window stands on: running jobs off the GUI thread, settings, dialogs, error
messages, the app's own paths, shared plot views and small widgets. Imports no other room."""
