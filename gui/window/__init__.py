"""The window room: the main window that composes the others around the session, its layout, docks and
menus, and the actions that reach outside (exports, TensorBoard, where to compute)."""
