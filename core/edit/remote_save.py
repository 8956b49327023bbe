"""Saving to a URL: the checkpoint is written and checked in a local staging folder first, then each
file is uploaded under a temporary name beside its place and moved onto it, the data shards first, the
`.index` files after them and the `checkpoint` state file last. A reader of the bucket (TensorFlow, a
training job, this app) therefore never sees an index whose data is not all there, and an upload cut
short leaves only hidden `.partial` objects, which no checkpoint pattern matches. Whether the URL is a
place to save to is judged before, as every destination is (core.edit.destination).
"""
from __future__ import annotations

import os
import shutil
import tempfile

from ..atomic_write import temporary_name
from ..format.checkpoint_state import STATE_FILE_NAME
from ..jobs import Job, Progress
from ..storage import files, paths, remote


def staged(save, destination: str, folder: bool = False) -> Job:
    """Job: run `save(local_destination)` (a job writing into a fresh staging folder: the prefix named as
    the URL's last part, or with `folder` the staging folder itself), upload what it wrote to the URL's
    folder (or the URL itself), and return the save's result."""
    staging = tempfile.mkdtemp(prefix="checkpoint-inspector-upload-")
    try:
        result = yield from save(staging if folder else os.path.join(staging, paths.basename(destination)))
        yield from upload_folder(staging, destination if folder else paths.dirname(destination))
        return result
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def upload_folder(local_folder: str, url_folder: str) -> Job[None]:
    """Job: every file under local_folder to the same place under url_folder, in the order that keeps a
    reader from seeing half a checkpoint (data, then indexes, then the state file)."""
    uploads = []
    for here, _, names in os.walk(local_folder):
        for name in names:
            local = os.path.join(here, name)
            relative = os.path.relpath(local, local_folder).replace(os.sep, "/")
            uploads.append((local, paths.join(url_folder, relative)))
    uploads.sort(key=lambda pair: (_upload_rank(pair[1]), pair[1]))
    for _, url in uploads:  # a checkpoint being replaced loses its index first: never old index, new data
        if url.endswith(".index") and files.exists(url):
            remote.remove(url)
    total = max(sum(os.path.getsize(local) for local, _ in uploads), 1)
    done = 0
    for local, url in uploads:
        yield Progress(done, total, f"Uploading {paths.basename(url)}")
        hidden = temporary_name(url)
        remote.put_file(local, hidden)
        remote.move(hidden, url)
        done += os.path.getsize(local)
    files.refresh(url_folder)
    yield Progress(total, total, "Uploaded")


def _upload_rank(url: str) -> int:
    name = paths.basename(url)
    if name == STATE_FILE_NAME:
        return 2
    return 1 if name.endswith(".index") else 0
