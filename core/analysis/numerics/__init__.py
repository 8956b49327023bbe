"""One tensor's numbers: statistics in one pass, sums and norms of pairs, value differences, grouped
small tensors, the work arrays they share and the BLAS thread setting. The bottom room of core.analysis."""
