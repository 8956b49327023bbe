"""Files behind URLs, through fsspec and the maintained file systems (s3fs, gcsfs, adlfs, HTTP).

Settings and credentials are only the standard ones each library reads (the AWS chain and
`AWS_ENDPOINT_URL`; Application Default Credentials and `STORAGE_EMULATOR_HOST`; Azure's
`AZURE_STORAGE_*`); nothing of ours is stored. What a checkpoint reader asks of a file (does it exist,
its size and version) is answered from one listing of its folder, kept by the file system's own
listing cache, so opening a run folder costs one listing and each checkpoint after it only the reads of
its bytes. Timeouts and retries are bounded; every failure becomes one error naming the URL and the
cause (no credentials, no such bucket, access denied, timeout, a missing library).
"""
from __future__ import annotations

import threading

from ..errors import StorageError
from .location import Location
from .paths import dirname, split_url

CONNECT_TIMEOUT_S = 10
READ_TIMEOUT_S = 60
ATTEMPTS = 3            # botocore's retries: a request is tried at most this many times
PARALLEL_RANGE_BYTES = 8 << 20  # a bigger read is split into ranges of this size, fetched at once

# What each protocol needs installed, for the message when it is not.
_PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs",
             "abfss": "adlfs", "http": "aiohttp", "https": "aiohttp"}
_filesystems: dict[str, object] = {}
_lock = threading.Lock()


def protocol_of(url: str) -> str:
    if type(url) is Location:  # parsed where it entered
        return url.protocol
    return split_url(url)[0][:-3].lower()


def filesystem(url: str):
    """(fsspec file system, its path for the URL); the file system is made once per protocol."""
    protocol = protocol_of(url)
    with _lock:
        fs = _filesystems.get(protocol)
        if fs is None:
            fs = _filesystems[protocol] = _make_filesystem(url, protocol)
    return fs, fs._strip_protocol(url) if protocol not in ("http", "https") else url


def _make_filesystem(url: str, protocol: str):
    try:
        import fsspec

        return fsspec.filesystem(protocol, skip_instance_cache=True, **_options(protocol))  # ours is the cache
    except ImportError as exc:
        package = _PACKAGES.get(protocol, f"the fsspec file system for {protocol}://")
        raise StorageError(url, f"reading {protocol}:// URLs needs {package}: pip install {package}"
                                f" ({exc})") from None
    except ValueError as exc:  # fsspec knows no such protocol
        raise StorageError(url, f"no file system for {protocol}:// URLs ({exc})") from None


def _options(protocol: str) -> dict:
    if protocol in ("s3", "s3a"):
        return {"config_kwargs": {"connect_timeout": CONNECT_TIMEOUT_S, "read_timeout": READ_TIMEOUT_S,
                                  "retries": {"max_attempts": ATTEMPTS, "mode": "standard"}}}
    if protocol in ("gs", "gcs"):
        return {"requests_timeout": READ_TIMEOUT_S, "retries": ATTEMPTS}
    if protocol in ("http", "https"):
        import aiohttp

        return {"client_kwargs": {"timeout": aiohttp.ClientTimeout(total=None, connect=CONNECT_TIMEOUT_S,
                                                                   sock_read=READ_TIMEOUT_S)}}
    return {}


def forget_filesystems() -> None:
    """Drop the file systems made so far (a test that points the AWS settings at another server)."""
    with _lock:
        _filesystems.clear()


def storage_error(url: str, exc: BaseException) -> BaseException:
    """The error to raise for what a remote call raised: FileNotFoundError stays one (callers decide what
    a missing file means), everything else becomes a StorageError naming the URL and the cause."""
    kind = type(exc).__name__
    text = str(exc) or kind
    if isinstance(exc, StorageError):
        return exc
    if isinstance(exc, FileNotFoundError):
        if "bucket" in text.lower():
            return StorageError(url, "no such bucket")
        return exc
    if isinstance(exc, PermissionError) or "AccessDenied" in text or "Forbidden" in text:
        return StorageError(url, f"access denied ({text})")
    if "NoCredentials" in kind or "credentials" in text.lower() and "could not" in text.lower():
        return StorageError(url, "no credentials: set them the standard way (the AWS chain, "
                                 "gcloud application-default login, or the AZURE_STORAGE_* settings)")
    if "Timeout" in kind or "timed out" in text.lower() or isinstance(exc, TimeoutError):
        return StorageError(url, f"timed out ({text})")
    if "Connect" in kind or "Connection" in kind:
        return StorageError(url, f"cannot reach the storage server ({text})")
    if isinstance(exc, OSError) and "not satisfiable" in text:
        return StorageError(url, "is shorter than the read asked of it (a range past its end)")
    return StorageError(url, f"{kind}: {text}")


def call(url: str, action):
    """action() with its failure turned into storage_error's one error."""
    try:
        return action()
    except Exception as exc:  # noqa: BLE001 - every library has its own errors; all are named here
        raise storage_error(url, exc) from None


def info(url: str) -> dict | None:
    """The file system's entry for the URL (name, size, type, ETag...), or None when nothing is there.
    Looked up in its folder's listing (one request per folder, cached) where the protocol lists."""
    fs, path = filesystem(url)
    parent = dirname(url)
    if parent != url and protocol_of(url) not in ("http", "https"):
        try:
            for entry in listing(parent):
                if entry["name"].rstrip("/") == path.rstrip("/"):
                    return entry
            return None
        except FileNotFoundError:
            return None
        except StorageError as exc:  # named by what was asked about, not the folder listed for it
            if not exc.problem.startswith("access denied"):
                raise StorageError(url, exc.problem) from None
            # A role may read objects without listing their folder: ask about the object itself.
    try:
        return call(url, lambda: fs.info(path))
    except FileNotFoundError:
        return None


def listing(url: str) -> list[dict]:
    """The folder's entries with details (cached by the file system until refresh)."""
    fs, path = filesystem(url)
    return call(url, lambda: fs.ls(path, detail=True))


def version_of(entry: dict) -> str:
    """What changes when the object is rewritten: its ETag, generation or modification time."""
    for field in ("ETag", "etag", "generation", "md5Hash", "LastModified", "mtime", "last_modified"):
        if entry.get(field) not in (None, ""):
            return str(entry[field])
    return ""


def refresh(url: str) -> None:
    """Forget what is cached of the folder's listing, so the next look sees new files (the watcher)."""
    fs, path = filesystem(url)
    fs.invalidate_cache(path)


def read_bytes(url: str, start: int | None = None, end: int | None = None) -> bytes:
    """The object's bytes (or [start, end)): one request; a big range is split into parallel ones."""
    fs, path = filesystem(url)
    if start is not None and end is not None and end - start > PARALLEL_RANGE_BYTES:
        starts = list(range(start, end, PARALLEL_RANGE_BYTES))
        ends = starts[1:] + [end]
        parts = call(url, lambda: fs.cat_ranges([path] * len(starts), starts, ends, on_error="raise"))
        for part in parts:
            if isinstance(part, BaseException):
                raise storage_error(url, part)
        return b"".join(parts)
    if start is None and end is None:
        return call(url, lambda: fs.cat_file(path))
    return call(url, lambda: fs.cat_file(path, start=start, end=end))


def open_file(url: str, mode: str = "rb"):
    fs, path = filesystem(url)
    return call(url, lambda: fs.open(path, mode))


def put_file(local_path: str, url: str) -> None:
    fs, path = filesystem(url)
    call(url, lambda: fs.put_file(local_path, path))


def move(source_url: str, url: str) -> None:
    """Copy within the store, then delete the source (object stores have no rename)."""
    fs, source = filesystem(source_url)
    _, path = filesystem(url)
    call(url, lambda: fs.copy(source, path))
    call(source_url, lambda: fs.rm_file(source))


def remove(url: str) -> None:
    fs, path = filesystem(url)
    call(url, lambda: fs.rm_file(path))


def make_folder(url: str) -> None:
    fs, path = filesystem(url)
    call(url, lambda: fs.makedirs(path, exist_ok=True))
