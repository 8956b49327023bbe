"""Where the bytes come from: local files and URLs (s3://, gs://, az://, https://, any fsspec protocol).

`location` parses a path once where it enters (a Location: local or URL, normalised, with its facts),
`paths` names things (join, dirname, is_url), `files` asks and reads (exists, listdir, version,
read_bytes), `remote` is fsspec behind them with its errors made ours, `read_cache` keeps remote index
files (and, on request, tensors) on the local disk. The engine above never calls `os` or fsspec on a
path that may be a URL: it calls these.
"""
