"""A model graph made drawable: its groups (hierarchy), which of them are open and where each item goes
(layout), and the graph written as Graphviz DOT (dot) or drawn as SVG (svg)."""
