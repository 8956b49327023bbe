"""TensorBoard event files: the TFRecord framing and the Event/Summary protos of logged scalars and
histograms."""
