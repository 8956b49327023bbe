"""The detail room: one variable's facts, statistics, values, heatmap and histogram."""
