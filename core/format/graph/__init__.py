"""TensorFlow graphs read without TensorFlow: a `.meta` MetaGraphDef, a SavedModel's graph, and their
summary (what a restore expects, what the graph holds)."""
