"""The training room: the overview of every variable over every step, logged training and the graph."""
