"""Keras files (`.keras`, `.weights.h5`, legacy `.h5`): recognised by their bytes, their weights named as a
loaded model names them, read and written behind the checkpoint reader protocol."""
