"""The Graph view: a model graph drawn, navigable and tied to the checkpoint shown."""
