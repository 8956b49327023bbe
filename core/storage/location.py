"""A location parsed once where a path enters: a local path or a URL, normalised, with its facts.

Text that names a run, a checkpoint or a file comes in at a few places (a command-line argument, the
window's dialog, a drop, the recent list, core.run.discovery.discover, core.run.loading.open_run).
There it becomes a `Location`; below, every storage function (core.storage.paths, core.storage.files,
core.storage.remote) reads the facts the Location carries instead of looking at the text again.

Design: `Location` is a `str`. Its text is the normalised path, so every caller that took a string
keeps working unchanged (`prefix + ".index"`, f-strings, `json.dumps`, dict keys, comparisons with plain
strings, `open()`, os.path, Qt), and it carries what parsing found: `is_url`, `scheme`, `protocol`,
`bucket` and `key`. Why not another design:
- a path class that is no string would have to change every signature of core and gui at once;
- universal-pathlib (pathlib over fsspec, 0.3.10) was measured against these functions on what a listing
  does: 4x to 70x slower locally on join, parent and `prefix + ".index"`, 25x to 870x on s3 URLs; on s3
  its exists and size cost 1.7x ours once a listing is cached and a HEAD request each (85x) before, where
  ours answer every file of a folder from one listing (core.storage.remote). It does not keep `..` inside
  a bucket either. So storage stays ours, with this type at its door.
Libraries that want an exact `str` (h5py stores only those as strings) are handed `str(location)`.

The rules, one place each:
- A URL is `scheme://bucket/key` with a scheme of two letters at least (`C://` is a Windows drive) other
  than `file`. Its key is normalised on its own (`..` stops at the bucket, `//` collapses, no trailing
  `/`); the scheme and bucket are kept as written.
- Anything else is local: a `file://` URL is the path it names, a leading `~` is the home folder, and the
  path is made absolute and normalised (os.path.abspath, as discovery always did).

Operations give Locations again without parsing: `join`, `parent`, `name`, and `+` of a suffix that
stays in the last name (`prefix + ".index"`); any other string operation gives a plain `str`, which the
storage functions still accept (and examine, as before). A Location is immutable; equality and hashing
are those of its text, and so is its repr (a cache key in core.storage.read_cache is the repr of a
version tuple: it must not change with the type of the path in it).
"""
from __future__ import annotations

import os
import posixpath
import re

URL_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+)://")  # two letters at least: `C://` is a Windows drive
_FILE_URL = "file://"
_OTHER_SEP = "" if os.sep == "/" else os.sep  # `\\` on Windows (where `/` is the other one), else nothing


def url_scheme_end(text: str) -> int:
    """Where the `scheme://` of a remote URL ends in the text, or 0 when the text is no remote URL."""
    if "://" not in text:  # the common local case costs one substring test
        return 0
    match = URL_SCHEME.match(text)
    return match.end() if match is not None and match.group(1).lower() != "file" else 0


def normalised_key(inside: str) -> str:
    """A URL's path inside its bucket, normalised: `..` stops at the bucket, `//` collapses."""
    return posixpath.normpath("/" + inside).lstrip("/") if inside else ""


class Location(str):
    """A local path or a URL, parsed once: `Location(text)` (a Location given is returned as it is)."""

    # A local path's facts are these class defaults: making one costs no more than making its string.
    is_url = False
    scheme = ""         # `s3://` as written; "" for a local path
    protocol = "file"   # `s3`, `gs`, `https`... lowercase; `file` for a local path
    bucket = ""         # a URL's first part (bucket, container or host); "" for a local path
    key = ""            # a URL's path inside its bucket ("" at the bucket); "" for a local path

    def __new__(cls, text: str | os.PathLike = "") -> "Location":
        if type(text) is cls:
            return text
        text = os.fspath(text)
        if not isinstance(text, str):
            raise TypeError(f"a location is text, not {type(text).__name__}")
        end = url_scheme_end(text)
        if end:
            scheme, rest = text[:end], text[end:]
            bucket, _, inside = rest.partition("/")
            key = normalised_key(inside)
            return _made_url(scheme + bucket + ("/" + key if key else ""), scheme, scheme[:-3].lower(), bucket, key)
        if text[:len(_FILE_URL)].lower() == _FILE_URL:
            text = text[len(_FILE_URL):]
        elif text.startswith("~"):
            text = os.path.expanduser(text)
        return str.__new__(Location, os.path.abspath(text))

    # Immutable: the facts were set once, by _made_url (or are the class's).
    def __setattr__(self, name, value):
        raise AttributeError(f"a Location cannot be changed ({name})")

    def __delattr__(self, name):
        raise AttributeError(f"a Location cannot be changed ({name})")

    def __reduce__(self):  # pickled (to a Dask worker, by copy) as its text, parsed again on arrival
        return Location, (str(self),)

    @property
    def sep(self) -> str:
        """The separator its parts are joined with."""
        return "/" if self.is_url else os.sep

    @property
    def name(self) -> str:
        """The last part (a URL at its bucket: the bucket), as os.path.basename."""
        if not self.is_url:
            return os.path.basename(self)
        return self.key.rpartition("/")[2] if self.key else self.bucket

    @property
    def parent(self) -> "Location":
        """The folder it is in; a bucket and the local root are their own parent (never climbed out of)."""
        if not self.is_url:
            folder = os.path.dirname(self)
            return self if folder == self else str.__new__(Location, folder)
        if not self.key:
            return self
        key = self.key.rpartition("/")[0]
        return _made_url(self.scheme + self.bucket + ("/" + key if key else ""), self.scheme, self.protocol,
                         self.bucket, key)

    def join(self, *names: str) -> "Location":
        """The location of `names` inside this one. Plain names (no separator, not `.` or `..`) are
        appended as they are; anything else is joined as os.path / posixpath join, then parsed, so the
        result is normalised and a URL stays in its bucket."""
        if len(names) == 1 and _plain_name(names[0]):
            tail = names[0]  # the common case: one name from a listing
        elif not names:
            return self
        elif all(_plain_name(name) for name in names):
            tail = self.sep.join(names)
        else:
            tail = None
        text = str(self)
        if tail is None or (self.is_url and not self.bucket):
            return Location((posixpath.join if self.is_url else os.path.join)(text, *names))
        if not self.is_url:
            return str.__new__(Location, text + tail if text.endswith(os.sep) else text + os.sep + tail)
        joined = text + tail if text.endswith("/") else text + "/" + tail
        return _made_url(joined, self.scheme, self.protocol, self.bucket, self.key + "/" + tail if self.key else tail)

    def __add__(self, suffix):
        """`prefix + ".index"`: a Location when the suffix only lengthens the last name; else a plain str
        (a separator in it, or a URL's bucket or the local root that the suffix would rename)."""
        joined = str.__add__(self, suffix)
        if joined is NotImplemented or "/" in suffix or (_OTHER_SEP and _OTHER_SEP in suffix):
            return joined
        if not self.is_url:
            # Normalised, a local path ends with a separator only at the root, whose name "" a suffix
            # would not lengthen but make (`/` + `..`): that one is left a plain string.
            return joined if self.endswith(os.sep) else str.__new__(Location, joined)
        if not self.key:  # `s3://bucket` + `.index` would name another bucket
            return joined
        return _made_url(joined, self.scheme, self.protocol, self.bucket, self.key + suffix)


def _made_url(text: str, scheme: str, protocol: str, bucket: str, key: str) -> Location:
    """A URL's Location from facts already known (no parsing): the one place its attributes are set."""
    location = str.__new__(Location, text)
    location.__dict__.update(is_url=True, scheme=scheme, protocol=protocol, bucket=bucket, key=key)
    return location


def _plain_name(name) -> bool:
    """A name appended as it is: no separator, not `.` or `..` (anything else is joined, then parsed)."""
    return (type(name) is str and name not in ("", ".", "..") and "/" not in name
            and not (_OTHER_SEP and _OTHER_SEP in name))


def parse_location(text: str | os.PathLike) -> Location:
    """The Location a path or URL names, parsed once (a Location is returned as it is). The one function
    a face calls on a path it receives: a command-line argument, a dialog, a drop, the recent list."""
    return Location(text)
