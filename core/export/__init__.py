"""Writing what a checkpoint holds in other formats: variable tables as CSV, tensors as CSV, .npy, .npz
and HDF5, streamed and written atomically."""
