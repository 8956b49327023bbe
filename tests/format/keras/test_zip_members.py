"""Compressed members of a `.keras` archive (issue 29, items 4, 9 and 10). Keras stores its members
uncompressed, but an archive re-zipped by hand (or by a tool) is DEFLATE- or LZMA-compressed and still
loads in Keras. Such a weights member is decompressed once, CRC-checked, into memory or an anonymous
temporary file (core.format.keras.files.KerasArchive.open_weights), instead of through zipfile's member
object, which decompresses again from the start on every backward seek (h5py seeks back all the time:
84 s for an 80 MB member). A member whose compressed stream is damaged is one error naming the archive
and the member, whatever the decompressor raises.

The archives are written by Keras (`model.save`) and re-zipped by Python's zipfile, as a person's tool
would; the damage is found by asking zipfile which byte of the stream makes its decompressor fail."""
from __future__ import annotations

import io
import lzma
import os
import time
import zipfile
import zlib

import numpy as np
import pytest

from checkpoint_inspector.core.errors import CorruptCheckpointError
from checkpoint_inspector.core.format.keras.files import MAX_EXPANSION, KerasArchive
from tests.bounded_cli import assert_one_error, run_cli

BIG_KERNEL = "layers/dense/vars/0"


def _save(path, inputs: int, units: int, seed: int = 0) -> None:
    import keras

    model = keras.Sequential([keras.Input((inputs,)), keras.layers.Dense(units), keras.layers.Dense(3)])
    rng = np.random.default_rng(seed)
    # Small integers: a weights member that compresses well, yet not beyond the zip-bomb rule.
    model.layers[0].kernel.assign(rng.integers(0, 4, size=(inputs, units)).astype(np.float32))
    model.save(str(path))


def _rezipped(source, target, method: int) -> None:
    """Every member of `source` again, compressed with `method` (what `zip -r` or a script would do)."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", method, compresslevel=1
                                                          if method == zipfile.ZIP_DEFLATED else None) as new:
        for info in old.infolist():
            new.writestr(info.filename, old.read(info))


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A valid .keras whose 80 MB weights member is DEFLATE-compressed, and the values Keras stored."""
    folder = tmp_path_factory.mktemp("big_keras")
    _save(folder / "stored.keras", 5000, 4000)
    _rezipped(folder / "stored.keras", folder / "deflated.keras", zipfile.ZIP_DEFLATED)
    with zipfile.ZipFile(folder / "deflated.keras") as archive:
        info = archive.getinfo("model.weights.h5")
        assert info.file_size > 75e6 and info.file_size < info.compress_size * MAX_EXPANSION
    return folder


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A small .keras written by Keras, and the same re-zipped with DEFLATE and with LZMA."""
    folder = tmp_path_factory.mktemp("small_keras")
    _save(folder / "stored.keras", 40, 30, seed=1)
    _rezipped(folder / "stored.keras", folder / "deflate.keras", zipfile.ZIP_DEFLATED)
    _rezipped(folder / "stored.keras", folder / "lzma.keras", zipfile.ZIP_LZMA)
    return folder


def test_a_big_deflated_weights_member_is_decompressed_once_and_seeks_cost_nothing(big):
    """h5py's reading pattern, exaggerated: a read near the end, then one at the start, 40 times. Through
    zipfile's member object each backward seek decompresses the 80 MB again (minutes); here, no time."""
    archive = KerasArchive(str(big / "deflated.keras"))
    try:
        member = archive.open_weights()
        size = archive.members["model.weights.h5"].file_size
        started = time.monotonic()
        for _ in range(40):
            member.seek(size - 4096)
            tail = member.read(4096)
            member.seek(0)
            head = member.read(8)
        assert time.monotonic() - started < 2.0
        assert head == b"\x89HDF\r\n\x1a\n" and len(tail) == 4096
        member.seek(0)
        with zipfile.ZipFile(big / "stored.keras") as stored:
            assert zlib.crc32(member.read()) == stored.getinfo("model.weights.h5").CRC  # the bytes Keras wrote
        member.close()
    finally:
        archive.close()


def test_the_cli_shows_a_big_deflated_keras_in_bounded_time_and_memory(big, tmp_path):
    """`show --npy` of the 80 MB kernel under 10 s and 2 GiB: the values Keras itself loads."""
    import keras

    result = run_cli("show", big / "deflated.keras", BIG_KERNEL, "--npy", tmp_path / "kernel.npy")
    assert result.returncode == 0, result.stderr
    expected = keras.saving.load_model(str(big / "stored.keras")).layers[0].kernel.numpy()
    assert np.array_equal(np.load(tmp_path / "kernel.npy"), expected)


@pytest.mark.parametrize("name", ["deflate.keras", "lzma.keras"])
def test_a_compressed_keras_reads_as_the_stored_one(small, name):
    stored = KerasArchive(str(small / "stored.keras"))
    other = KerasArchive(str(small / name))
    try:
        assert other.open_weights().read() == stored.open_weights().read()
        assert other.json_member("config.json") == stored.json_member("config.json")
    finally:
        stored.close()
        other.close()
    assert run_cli("list", small / name).returncode == 0


def _damaged(source, target, member: str, raised: type) -> None:
    """`source` with one byte of `member`'s compressed stream changed, the first one (from a tenth into
    the stream) that makes zipfile's decompressor raise `raised`; the archive's directory, sizes and
    CRCs stay as they were."""
    data = bytearray(source.read_bytes())
    with zipfile.ZipFile(source) as archive:
        info = archive.getinfo(member)
    name_length, extra_length = int.from_bytes(data[info.header_offset + 26:info.header_offset + 28], "little"), \
        int.from_bytes(data[info.header_offset + 28:info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_length + extra_length
    for offset in range(start + max(info.compress_size // 10, 8), start + info.compress_size):
        for flip in (0xFF, 0x55, 0x01):
            trial = bytearray(data)
            trial[offset] ^= flip
            try:
                zipfile.ZipFile(io.BytesIO(bytes(trial))).read(member)
            except raised:
                target.write_bytes(bytes(trial))
                return
            except Exception:
                continue
    pytest.fail(f"no byte of {member} makes zipfile raise {raised.__name__}")


@pytest.mark.parametrize("name, raised", [("deflate.keras", zlib.error), ("lzma.keras", lzma.LZMAError)])
@pytest.mark.parametrize("member", ["model.weights.h5", "config.json"])
def test_a_damaged_compressed_stream_is_one_error_naming_the_file_and_the_member(small, tmp_path, name, raised,
                                                                                 member):
    hostile = tmp_path / f"damaged_{name}"
    _damaged(small / name, hostile, member, raised)
    with pytest.raises(CorruptCheckpointError) as caught:
        archive = KerasArchive(str(hostile))
        try:
            archive.json_member("config.json")
            archive.open_weights()
        finally:
            archive.close()
    assert str(hostile) in str(caught.value) and member in str(caught.value)
    for command in (("list", hostile), ("show", hostile, BIG_KERNEL)):
        assert_one_error(run_cli(*command), hostile, member)


def test_a_member_whose_crc_does_not_match_its_bytes_is_refused(small, tmp_path):
    """A stream that decompresses, to other bytes than were zipped: the archive's CRC-32 (here changed in
    the local header and the central directory alike) catches it before h5py reads any of it."""
    hostile = tmp_path / "wrong_crc.keras"
    data = bytearray((small / "deflate.keras").read_bytes())
    with zipfile.ZipFile(small / "deflate.keras") as archive:
        info = archive.getinfo("model.weights.h5")
    wrong = ((info.CRC ^ 1) & 0xFFFFFFFF).to_bytes(4, "little")
    data[info.header_offset + 14:info.header_offset + 18] = wrong  # local file header: CRC-32 at byte 14
    entry = data.index(b"PK\x01\x02")
    while data[entry + 46:entry + 46 + int.from_bytes(data[entry + 28:entry + 30], "little")] != b"model.weights.h5":
        entry = data.index(b"PK\x01\x02", entry + 4)
    data[entry + 16:entry + 20] = wrong  # central directory entry: CRC-32 at byte 16
    hostile.write_bytes(bytes(data))
    archive = KerasArchive(str(hostile))
    try:
        with pytest.raises(CorruptCheckpointError, match="model.weights.h5"):
            archive.open_weights()
    finally:
        archive.close()
    assert_one_error(run_cli("list", hostile), hostile, "model.weights.h5")


def test_an_lzma_stream_asking_for_a_huge_dictionary_is_refused_before_it_is_allocated(small, tmp_path):
    """The fuzzer's find: an LZMA member whose properties ask for a 4 GiB dictionary made the decoder
    allocate it (MemoryError under the 2 GiB limit). Every member's dictionary size is set so."""
    data = bytearray((small / "lzma.keras").read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        for info in archive.infolist():
            name_length, extra_length = int.from_bytes(data[info.header_offset + 26:info.header_offset + 28], "little"), \
                int.from_bytes(data[info.header_offset + 28:info.header_offset + 30], "little")
            start = info.header_offset + 30 + name_length + extra_length
            data[start + 5:start + 9] = b"\xff\xff\xff\xff"
    hostile = tmp_path / "huge_dictionary.keras"
    hostile.write_bytes(bytes(data))
    assert_one_error(run_cli("list", hostile), hostile, "dictionary")
    assert_one_error(run_cli("show", hostile, "dense/kernel"), hostile, "dictionary")


@pytest.mark.parametrize("closed", [True, False])
def test_the_decompressed_copy_of_a_weights_member_is_removed_closed_or_dropped(small, closed):
    """A compressed weights member is read from a copy of ours in the temporary folder; it goes when the
    reader closes, and when a reader nobody closed is collected (a day of tests once left 1.1 GB behind)."""
    import gc

    from checkpoint_inspector.core.format.readers import open_reader

    reader = open_reader(str(small / "deflate.keras"))
    copy = reader.source.path
    assert copy != str(small / "deflate.keras") and os.path.exists(copy)
    with open_reader(str(small / "stored.keras")) as stored:
        assert np.array_equal(reader.read(BIG_KERNEL), stored.read(BIG_KERNEL))
    if closed:
        reader.close()
    else:
        del reader
        gc.collect()
    assert not os.path.exists(copy)
