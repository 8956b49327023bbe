"""Which checkpoint files of one folder belong together by their names: the name template a saver fills in.

A saver names the checkpoints of one run from one pattern and a number that changes: TensorFlow's Saver
and CheckpointManager append the step (`model.ckpt-1000`, `ckpt-5`); Keras's ModelCheckpoint formats its
`filepath` with `str.format(epoch=epoch + 1, batch=..., **logs)` (keras/src/callbacks/model_checkpoint.py,
`_get_file_path`), so `weights.{epoch:02d}-{val_loss:.2f}.weights.h5` gives `weights.05-0.42.weights.h5`
and `model-{epoch:02d}.keras` gives `model-05.keras`. Every field of such a pattern is a number, as
`format` writes one (`5`, `05`, `0.42`, `-0.42`, `4.2e-05`, `42%`, `nan`, `inf`), so taking the numbers out
of a name gives back its pattern: files with the same template come from the same saver. (Keras itself,
looking for its latest file, turns each `{...}` of the pattern into `.*`: the same idea from the other side.)

A number glued to letters on its left is a field too (Keras's own example writes `batch03epoch02.keras`);
the price is that `resnet50-01.keras` and `resnet101-01.keras` share a template.
"""
from __future__ import annotations

import re

from .checkpoint_info import keras_name_parts

FIELD = "{}"
# A number as str.format writes an int or a float field: digits, a fraction, an exponent, a percent sign,
# or nan/inf; a minus sign belongs to the number unless it follows a letter or digit (there it separates,
# as in `model.ckpt-1000` or `weights.05-0.42`).
_NUMBER = re.compile(r"(?:(?<![0-9A-Za-z])-)?(?:\d+(?:\.\d+)?(?:[eE][-+]?\d+)?%?|(?<![A-Za-z])(?:nan|inf)(?![A-Za-z]))")


def name_template(name: str) -> str:
    """`weights.05-0.42.weights.h5` -> `weights.{}-{}.weights.h5`; `model.ckpt-1000` -> `model.ckpt-{}`;
    a name without a number is its own template. The Keras suffix stays as it is (`x.h5` and `x.keras`
    are two savers)."""
    stem = keras_name_parts(name)[0]
    return _NUMBER.sub(FIELD, stem) + name[len(stem):]


def has_field(template: str) -> bool:
    return FIELD in template


def series_of(names: list[str]) -> dict[str, list[str]]:
    """{template: names} of the names that share a template with at least one other (a saver's series);
    a name alone under its template is in none."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(name_template(name), []).append(name)
    return {template: members for template, members in groups.items() if len(members) > 1 and has_field(template)}


def series_steps(names: list[str]) -> dict[str, int]:
    """{name: its epoch or batch number} for the names of each series (series_of) in which exactly one of
    the template's fields differs between members and is a whole number in all of them: `ep01.weights.h5`,
    `ep02.weights.h5` -> 1, 2; `weights.05-0.42`, `weights.06-0.40` -> 5, 6 (the loss is no whole number).
    A series whose whole numbers differ in several fields (`batch03epoch02`) says nothing here."""
    steps: dict[str, int] = {}
    for members in series_of(names).values():
        fields = [[m.group(0) for m in _NUMBER.finditer(keras_name_parts(name)[0])] for name in members]
        if len({len(f) for f in fields}) != 1:
            continue
        varying = [i for i in range(len(fields[0])) if len({f[i] for f in fields}) > 1
                   and all(f[i].isdigit() for f in fields)]
        if len(varying) == 1:
            steps.update((name, int(f[varying[0]])) for name, f in zip(members, fields))
    return steps
