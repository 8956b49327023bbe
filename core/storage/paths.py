"""Paths that may be URLs: what a name looks like, not what is behind it.

A local path goes to `os.path` as it always did; a URL (`s3://bucket/run/ckpt-1`, `gs://...`,
`https://...`, any fsspec protocol) is split, joined and normalised on its path part only, so `s3://`
never collapses into `s3:/` and the bucket is never climbed out of. `file://` URLs are local paths.

Each function takes a plain string or a core.storage.location.Location. A Location was parsed where it
entered: its facts are read, not its text, and what it gives (join, dirname) is a Location again; a plain
string is examined as it always was.
"""
from __future__ import annotations

import os
import posixpath

from .location import URL_SCHEME as _SCHEME, Location, normalised_key, url_scheme_end


def is_url(path) -> bool:
    """True for a remote URL (not `file://`, which is local)."""
    if type(path) is Location:  # parsed where it entered: nothing to look at again
        return path.is_url
    if not isinstance(path, str):
        path = os.fspath(path)
    return url_scheme_end(path) > 0


def local_form(path) -> str:
    """The path as given, with a `file://` URL turned into the local path it names."""
    path = os.fspath(path)
    return path[len("file://"):] if path.lower().startswith("file://") else path


def split_url(url: str) -> tuple[str, str]:
    """(`s3://`, `bucket/run/ckpt-1`)."""
    if type(url) is Location:
        return url.scheme, url[len(url.scheme):]
    match = _SCHEME.match(url)
    return url[:match.end()], url[match.end():]


def join(base, *names: str) -> str:
    if type(base) is Location:
        return base.join(*names)
    base = os.fspath(base)
    if not is_url(base):
        return os.path.join(base, *names)
    return posixpath.join(base, *names)


def split(path) -> tuple[str, str]:
    return dirname(path), basename(path)


def dirname(path) -> str:
    if type(path) is Location:
        return path.parent
    path = os.fspath(path)
    if not is_url(path):
        return os.path.dirname(path)
    scheme, rest = split_url(path)
    rest = rest.rstrip("/")
    return scheme + (posixpath.dirname(rest) if "/" in rest else rest)  # the bucket has no parent


def basename(path) -> str:
    if type(path) is Location:
        return path.name
    path = os.fspath(path)
    if not is_url(path):
        return os.path.basename(path)
    return posixpath.basename(split_url(path)[1].rstrip("/"))


def normpath(path) -> str:
    if type(path) is Location:  # normalised when parsed
        return path
    path = os.fspath(path)
    if not is_url(path):
        return os.path.normpath(path)
    scheme, rest = split_url(path)
    if not rest:
        return path
    bucket, _, inside = rest.partition("/")
    inside = normalised_key(inside)  # `..` stops at the bucket, never leaves it
    return scheme + bucket + ("/" + inside if inside else "")


def abspath(path) -> str:
    if type(path) is Location:  # absolute when parsed
        return path
    path = local_form(path)
    return normpath(path) if is_url(path) else os.path.abspath(path)


def isabs(path) -> bool:
    if type(path) is Location:
        return True
    path = os.fspath(path)
    return is_url(path) or os.path.isabs(path)


def relpath(path, start) -> str:
    path, start = os.fspath(path), os.fspath(start)
    if not is_url(path):
        return os.path.relpath(path, start)
    return posixpath.relpath(split_url(path)[1], split_url(start)[1])


def sep_of(path) -> str:
    """The separator a path's parts are joined with."""
    if type(path) is Location:
        return path.sep
    return "/" if is_url(path) else os.sep
