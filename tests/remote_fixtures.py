"""A real S3 server for the tests: moto in server mode on 127.0.0.1 at a free port, with every request it
answers recorded, so a test can count what a listing cost. Checkpoints that TensorFlow wrote are uploaded
to it with boto3, and the app reads them over HTTP through s3fs, as it would read AWS."""
from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from pathlib import Path

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_DEFAULT_REGION": "us-east-1"}


class S3Server:
    """moto's S3 on a thread of this process; `requests` holds (method, path, query, Range header) of
    every request answered since the last `forget_requests()`."""

    def __init__(self):
        from moto.server import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request would drown the test output
        self.requests: list[tuple[str, str, str, str]] = []
        self._lock = threading.Lock()
        moto_app = DomainDispatcherApplication(create_backend_app)

        def counted(environ, start_response):
            with self._lock:
                self.requests.append((environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""),
                                      environ.get("QUERY_STRING", ""), environ.get("HTTP_RANGE", "")))
            return moto_app(environ, start_response)

        self._server = make_server("127.0.0.1", _free_port(), counted, threaded=True)
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, **_boto_credentials())

    def forget_requests(self) -> None:
        with self._lock:
            self.requests.clear()

    def counted(self) -> list[tuple[str, str, str, str]]:
        with self._lock:
            return list(self.requests)

    def make_bucket(self, name: str) -> str:
        self.client().create_bucket(Bucket=name)
        return name

    def upload(self, folder: Path, bucket: str, key_prefix: str) -> str:
        """Every file under `folder`, uploaded as `key_prefix/relative/path`; returns its s3:// URL."""
        client = self.client()
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                client.upload_file(str(path), bucket, f"{key_prefix}/{path.relative_to(folder).as_posix()}")
        return f"s3://{bucket}/{key_prefix}"

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join()


def _boto_credentials() -> dict:
    return {"aws_access_key_id": CREDENTIALS["AWS_ACCESS_KEY_ID"],
            "aws_secret_access_key": CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            "region_name": CREDENTIALS["AWS_DEFAULT_REGION"]}


def _free_port() -> int:
    with contextlib.closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def s3_environment(server: S3Server):
    """The standard AWS settings pointing at the server, for this process and the children it starts."""
    settings = dict(CREDENTIALS, AWS_ENDPOINT_URL=server.endpoint)
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield settings
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class RemoteCopy:
    """A local folder and its uploaded copy: `url(path)` is where a path under the folder is remotely."""

    def __init__(self, root: Path, url: str):
        self.root, self.base = Path(root), url

    def url(self, path) -> str:
        relative = Path(path).relative_to(self.root).as_posix()
        return f"{self.base}/{relative}" if relative != "." else self.base
