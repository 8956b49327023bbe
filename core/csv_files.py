"""Writing CSV files the way every export here does: UTF-8, a header row, the csv module's quoting (so
odd variable names survive), under a temporary name renamed when complete."""
from __future__ import annotations

import csv
import os


def write_csv(path: str, header: list[str], rows) -> None:
    tmp = path + ".partial"
    try:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            writer.writerows(rows)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
