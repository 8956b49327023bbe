"""The wire level of the formats: protobuf varints and fields, CRC32C, Snappy, OrderedCode, the LevelDB
table of an `.index` file (read and written) and TensorProto. No checkpoint meaning lives here."""
