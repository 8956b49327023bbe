"""Tensor bundles: the V2 checkpoint (`.index` entries, `.data-*` shards, partitions, reading, writing and
committing), V1 single-file tables, the TF2 object graph stored in a bundle, and tensors named by where
their bytes are."""
