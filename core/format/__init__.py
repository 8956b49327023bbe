"""Bytes to meaning, the bottom layer of the engine above storage, in rooms: wire/ (protobuf wire, CRC32C,
Snappy, OrderedCode, the LevelDB table), bundle/ (V2 bundles, V1 tables, the object graph), graph/ (`.meta`
and SavedModel graphs), events/ (TensorBoard event files), keras/ (Keras files). On top: the reader
protocol every reader implements (`source`: CheckpointSource and its SourceKind), TensorFlow's dtypes
and the naming conventions of stored keys (used by every room), the `checkpoint` state file, and
`readers`, which picks the reader a path needs. Imports nothing above it."""
