"""Damaged copies of a file's bytes for the format tests: every third one cut short at a random point,
the others with one to seven random bytes overwritten (the damage disks and downloads do)."""
from __future__ import annotations

import random


def damaged_versions(data: bytes, seed: int, count: int):
    rng = random.Random(seed)
    for trial in range(count):
        mutated = bytearray(data)
        if trial % 3 == 0:
            mutated = mutated[:rng.randrange(len(mutated))]
        else:
            for _ in range(rng.randrange(1, 8)):
                mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        yield bytes(mutated)
