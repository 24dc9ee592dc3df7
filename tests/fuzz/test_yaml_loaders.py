"""The YAML loaders fuzzed: whatever the bytes, a load or suite file becomes its model (a suite its
cases too) or a GauntletError of one line, never another exception."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from hypothesis import given

from gauntlet.errors import GauntletError
from gauntlet.lab import loadfile
from gauntlet.suite.expand import expand
from gauntlet.suite.load import load_suite
from tests.fuzz.yaml_texts import write, yaml_texts

#: Suites expanded into their cases only up to this many server kinds and groups (a valid fuzzed suite
#: can stand for millions of cases; expansion is checked, not its size).
EXPANDED_PARTS_MAX = 4


def load_a_suite(path: Path) -> None:
    loaded = load_suite(str(path))
    suite = loaded.suite
    if len(suite.servers) * len(suite.groups) <= EXPANDED_PARTS_MAX:
        expand(suite, [entry.kind for entry in suite.servers], path.parent)


def only_model_or_one_line_error(loader: Callable[[Path], object], text: bytes) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = write(Path(directory), "fuzzed.yaml", text)
        try:
            loader(path)
        except GauntletError as err:
            message = str(err)
            assert message.strip() and message.isprintable(), repr(message)


@given(yaml_texts)
def test_load_files_become_a_model_or_one_error_line(text: bytes) -> None:
    only_model_or_one_line_error(loadfile.load, text)


@given(yaml_texts)
def test_suite_files_become_a_model_or_one_error_line(text: bytes) -> None:
    only_model_or_one_line_error(load_a_suite, text)
