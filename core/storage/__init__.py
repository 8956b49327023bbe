"""Where the bytes come from: local files and URLs (s3://, gs://, az://, https://, any fsspec protocol).

`paths` names things (join, dirname, is_url), `files` asks and reads (exists, listdir, version,
read_bytes), `remote` is fsspec behind them with its errors made ours, `read_cache` keeps remote index
files (and, on request, tensors) on the local disk. The engine above never calls `os` or fsspec on a
path that may be a URL: it calls these.
"""
