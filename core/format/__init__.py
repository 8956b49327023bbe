"""Bytes to meaning, the bottom layer of the engine: the LevelDB table and the tensor bundle (reader and
writer), TensorFlow's dtypes, the protobuf wire format, CRC32C, Snappy and OrderedCode, the `checkpoint`
state file, the TF2 object graph and the naming conventions of stored keys. Imports nothing above it."""
