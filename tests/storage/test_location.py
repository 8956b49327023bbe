"""core.storage.location: a path parsed once where it enters. Parsing and normalising local paths and
URLs, the operations readers use (join, parent, name, `prefix + suffix`), equality with plain strings,
that a Location is taken wherever a path string was (storage, readers, discovery, open_run), and that
`main.py list RUN` parses its PATH once and no storage call along it looks at that text again."""
import contextlib
import io
import json
import os
import pickle
import shutil
import sys

import pytest

from checkpoint_inspector.core.storage import files, paths
from checkpoint_inspector.core.storage.location import Location, parse_location
from tests.locations import SAMPLE_RUN


# ---- parsing ------------------------------------------------------------------------------------

def test_a_relative_local_path_becomes_absolute_and_normalised(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    location = Location("run/./a/../ckpt-1")
    assert location == str(tmp_path / "run" / "ckpt-1")
    assert not location.is_url and location.protocol == "file" and location.scheme == ""
    assert location.bucket == "" and location.key == ""


def test_an_absolute_local_path_is_normalised():
    assert Location("/tmp//runs/./exp/../exp3/") == "/tmp/runs/exp3"
    assert Location("/") == "/"


def test_a_tilde_is_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert Location("~") == str(tmp_path)
    assert Location("~/runs/../exp") == str(tmp_path / "exp")


@pytest.mark.parametrize("text", ["file:///tmp/runs/exp", "FILE:///tmp/runs/./exp", "file:///tmp/runs/x/../exp"])
def test_a_file_url_is_the_local_path_it_names(text):
    location = Location(text)
    assert location == "/tmp/runs/exp" and not location.is_url and location.protocol == "file"


@pytest.mark.parametrize("text, scheme, protocol, bucket, key", [
    ("s3://bucket/runs/exp/ckpt-1", "s3://", "s3", "bucket", "runs/exp/ckpt-1"),
    ("gs://my-bucket/a", "gs://", "gs", "my-bucket", "a"),
    ("https://example.org/models/ckpt-1", "https://", "https", "example.org", "models/ckpt-1"),
    ("az://container", "az://", "az", "container", ""),
    ("S3://Bucket/Key", "S3://", "s3", "Bucket", "Key"),  # scheme and bucket kept as written
])
def test_urls_are_split_into_protocol_bucket_and_key(text, scheme, protocol, bucket, key):
    location = Location(text)
    assert location.is_url and location == text
    assert (location.scheme, location.protocol, location.bucket, location.key) == (scheme, protocol, bucket, key)


@pytest.mark.parametrize("text, expected", [
    ("s3://bucket/a/../../../../etc", "s3://bucket/etc"),   # `..` never leaves the bucket
    ("s3://bucket/..", "s3://bucket"),
    ("s3://bucket//runs///exp/", "s3://bucket/runs/exp"),   # double slashes collapse, no trailing slash
    ("s3://bucket/", "s3://bucket"),
    ("gs://b/./runs/./x", "gs://b/runs/x"),
    ("https://host/a/b/../c", "https://host/a/c"),
])
def test_a_url_is_normalised_inside_its_bucket(text, expected):
    location = Location(text)
    assert location == expected
    assert location == paths.normpath(text)  # the one rule, as the string functions apply it


def test_a_windows_drive_is_no_url(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert not Location("C://data").is_url


def test_parse_location_returns_a_location_as_it_is():
    location = parse_location("s3://bucket/run")
    assert parse_location(location) is location and Location(location) is location
    assert parse_location(SAMPLE_RUN) == str(SAMPLE_RUN)  # an os.PathLike too
    with pytest.raises(TypeError):
        Location(b"/tmp")


# ---- operations -----------------------------------------------------------------------------------

def test_join_parent_and_name_of_a_local_path():
    folder = Location("/runs/exp")
    prefix = folder.join("ckpt-1")
    assert prefix == "/runs/exp/ckpt-1" and type(prefix) is Location and prefix.parent == folder
    assert folder.join("variables", "variables") == "/runs/exp/variables/variables"
    assert prefix.name == "ckpt-1" and folder.name == "exp"
    assert Location("/").parent == "/" and Location("/").join("x") == "/x"
    assert folder.join("a/../b") == "/runs/exp/b" and folder.join() is folder


def test_join_parent_and_name_of_a_url():
    folder = Location("s3://bucket/runs")
    prefix = folder.join("exp", "ckpt-1")
    assert prefix == "s3://bucket/runs/exp/ckpt-1" and prefix.key == "runs/exp/ckpt-1" and prefix.is_url
    assert prefix.parent == "s3://bucket/runs/exp" and prefix.parent.parent.parent == "s3://bucket"
    assert Location("s3://bucket").parent == "s3://bucket"  # a bucket has no parent
    assert Location("s3://bucket").name == "bucket" and prefix.name == "ckpt-1"
    assert Location("s3://bucket").join("a") == "s3://bucket/a" and Location("s3://bucket").join("a").key == "a"
    assert folder.join("../../../x") == "s3://bucket/x"  # a joined `..` stays in the bucket too


def test_a_suffix_appended_to_a_prefix_stays_a_location():
    for prefix in (Location("/runs/exp/ckpt-1"), Location("s3://bucket/exp/ckpt-1")):
        index = prefix + ".index"
        assert index == str(prefix) + ".index" and type(index) is Location
        assert index.is_url == prefix.is_url and index.parent == prefix.parent and index.name == "ckpt-1.index"
    assert (Location("s3://bucket/exp/ckpt-1") + ".index").key == "exp/ckpt-1.index"
    # What would leave the last name is a plain string, examined as any other.
    assert type(Location("/runs/exp") + "/ckpt-1") is str
    assert type(Location("s3://bucket") + ".index") is str  # another bucket's name
    assert type(Location("/") + "x") is str


@pytest.mark.parametrize("text", ["/runs/exp/ckpt-1", "s3://bucket/runs/exp/ckpt-1", "gs://b/x", "s3://b",
                                  "https://host/m/ckpt-1"])
def test_the_operations_agree_with_the_string_functions(text):
    location = Location(text)
    assert paths.dirname(location) == paths.dirname(text) and type(paths.dirname(location)) is Location
    assert paths.basename(location) == paths.basename(text)
    assert paths.join(location, "x.index") == paths.join(text, "x.index")
    assert paths.join(location, "a", "b") == paths.join(text, "a", "b")
    assert paths.sep_of(location) == paths.sep_of(text) and paths.is_url(location) == paths.is_url(text)
    assert paths.abspath(location) is location and paths.normpath(location) is location and paths.isabs(location)
    assert paths.split_url(location) == paths.split_url(text) if location.is_url else True


def test_equality_and_hash_are_those_of_the_text(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    relative, absolute = Location("run"), Location(str(tmp_path / "run"))
    assert relative == absolute and hash(relative) == hash(absolute) == hash(str(tmp_path / "run"))
    assert relative == str(tmp_path / "run") and len({relative, absolute, str(absolute)}) == 1
    assert {str(absolute): 1}[relative] == 1
    assert Location("s3://b/x") != Location("gs://b/x") and Location("s3://b/x") != "/b/x"


def test_a_location_is_immutable_and_travels_as_its_text():
    location = Location("s3://bucket/run/ckpt-1")
    with pytest.raises(AttributeError):
        location.key = "elsewhere"
    with pytest.raises(AttributeError):
        del location.bucket
    copy = pickle.loads(pickle.dumps(location))  # to a Dask worker
    assert copy == location and type(copy) is Location and copy.key == "run/ckpt-1" and copy.is_url
    assert repr(location) == repr(str(location))  # a cache key holds a repr: it must not change
    assert json.dumps({"prefix": location}) == json.dumps({"prefix": str(location)})
    assert f"{location}" == str(location) and os.fspath(location) is location


# ---- accepted wherever a path string was ----------------------------------------------------------

def test_storage_files_take_a_location(tmp_path):
    shutil.copytree(SAMPLE_RUN, tmp_path / "run")
    folder = tmp_path / "run"
    run, index = Location(folder), Location(folder / "ckpt-100.index")
    assert files.isdir(run) and files.exists(index) and files.isfile(index) and not files.islink(index)
    assert sorted(files.listdir(run)) == sorted(os.listdir(folder))
    assert files.getsize(index) == os.path.getsize(folder / "ckpt-100.index")
    assert files.version(index) == files.version(str(index))
    assert files.read_bytes(index, 4, 12) == (folder / "ckpt-100.index").read_bytes()[4:12]
    with files.open_binary(index) as f:
        assert f.read() == (folder / "ckpt-100.index").read_bytes()
    assert [here for here, _, _ in files.walk(run)] == [here for here, _, _ in os.walk(folder)]


def test_readers_discovery_and_open_run_take_a_location_and_hand_locations_down(tmp_path):
    from checkpoint_inspector.core.format.readers import open_reader
    from checkpoint_inspector.core.jobs import run_to_end
    from checkpoint_inspector.core.run.discovery import discover
    from checkpoint_inspector.core.run.loading import open_run

    shutil.copytree(SAMPLE_RUN, tmp_path / "run")
    location = Location(tmp_path / "run")
    assert open_reader(location.join("ckpt-300")).names() == open_reader(str(tmp_path / "run" / "ckpt-300")).names()
    for given in (location, str(tmp_path / "run")):  # text is parsed at discover's door
        run = discover(given)
        assert run.folder == location and type(run.folder) is Location
        assert all(type(c.prefix) is Location for c in run.checkpoints)
        assert [c.step for c in run.checkpoints] == [100, 150, 200, 250, 300]
    loaded = run_to_end(open_run(location))
    assert loaded.checkpoint.prefix == location.join("ckpt-300") and len(loaded.variables) > 0


def test_remote_storage_takes_a_location(tmp_path, s3_server, remote_cache):
    shutil.copytree(SAMPLE_RUN, tmp_path / "run")
    s3_server.make_bucket("locations")
    base = s3_server.upload(tmp_path / "run", "locations", "sample")
    run = Location(base + "/./x/..//")
    assert run == base and run.protocol == "s3" and run.bucket == "locations" and run.key == "sample"
    files.refresh(run)
    index = run.join("ckpt-100") + ".index"
    assert type(index) is Location and files.exists(index) and files.isfile(index) and files.isdir(run)
    assert sorted(files.listdir(run)) == sorted(files.listdir(base))
    assert files.getsize(index) == files.getsize(str(index)) == os.path.getsize(tmp_path / "run" / "ckpt-100.index")
    assert files.read_bytes(index, 0, 8) == (tmp_path / "run" / "ckpt-100.index").read_bytes()[:8]
    from checkpoint_inspector.core.run.discovery import discover

    assert [c.step for c in discover(run).checkpoints] == [100, 150, 200, 250, 300]


# ---- the command line parses its PATH once ---------------------------------------------------------

@contextlib.contextmanager
def counted_examinations():
    """Every text core.storage.paths.is_url had to look at (an argument that was no parsed Location),
    wherever in core it is called from; and how many Locations were parsed from text."""
    from checkpoint_inspector.core.storage import location as location_module

    original_is_url, original_scheme_end = paths.is_url, location_module.url_scheme_end
    examined: list[str] = []
    parsed: list[str] = []

    def is_url(path):
        if type(path) is not Location:
            examined.append(str(path))
        return original_is_url(path)

    def url_scheme_end(text):
        parsed.append(text)
        return original_scheme_end(text)

    patched = [(module, name) for module_name, module in list(sys.modules.items())
               if module_name.startswith("core") and module is not None
               for name, value in vars(module).items() if value is original_is_url]
    for module, name in patched:
        setattr(module, name, is_url)
    location_module.url_scheme_end = url_scheme_end
    try:
        yield examined, parsed
    finally:
        for module, name in patched:
            setattr(module, name, original_is_url)
        location_module.url_scheme_end = original_scheme_end


@pytest.mark.parametrize("given", ["run", "run/ckpt-300.index"])
def test_list_of_a_local_run_parses_its_path_once(tmp_path, given):
    from checkpoint_inspector.core.cli.entry import run as run_cli
    from checkpoint_inspector.core.format.bundle import index_cache
    from checkpoint_inspector.core.format.checkpoint_state import read_state_file
    from checkpoint_inspector.core.run import variables

    shutil.copytree(SAMPLE_RUN, tmp_path / "run")
    folder, argument = str(tmp_path / "run"), str(tmp_path / given)
    run_cli(["list", argument])  # every module of the command imported, so every binding of is_url is counted
    index_cache.forget_all()
    variables.forget_listings()
    with counted_examinations() as (examined, parsed), contextlib.redirect_stdout(io.StringIO()) as out:
        assert run_cli(["list", argument]) == 0
    assert "22 variables" in out.getvalue() and "ckpt-300 at step 300" in out.getvalue()
    # One parse where the argument entered; a file's prefix, cut from its text, once more.
    assert parsed == [argument] if given == "run" else parsed == [argument, argument[:-len(".index")]]
    # What is examined is only text read from the run, never the argument or a path made from it: the
    # state file's lines (each resolved once for the listing and once for its times) and the data files
    # the index names. Before Location there were 221 examinations along this command.
    state = read_state_file(os.path.join(folder, "checkpoint"))
    from_the_state_file = [text for text in examined if text in state.all_paths or text == state.latest]
    data_files = [text for text in examined if ".data-" in text]
    assert len(from_the_state_file) + len(data_files) == len(examined), examined
    assert len(from_the_state_file) <= 2 * len(state.all_paths) + 1 and len(data_files) <= 2
