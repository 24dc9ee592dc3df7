"""The YAML loaders fuzzed: whatever the bytes, a load or suite file becomes its model or a
GauntletError of one line, never another exception; and every plan a valid file makes, the
engine accepts (it would otherwise refuse it after the servers started)."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from hypothesis import given

from gauntlet import _engine
from gauntlet.errors import GauntletError
from gauntlet.model import loadfile
from gauntlet.plan import Plan
from gauntlet.suite.expand import expand
from gauntlet.suite.load import load_suite
from tests.fuzz.yaml_texts import write, yaml_texts

#: A valid fuzzed suite can stand for millions of cases: only smaller ones are expanded and checked.
EXPANDED_CASES_MAX = 10_000
URL = "http://127.0.0.1:1/"


def engine_accepts(plan: Plan) -> None:
    """The engine parses and resolves the plan (nothing runs)."""
    _engine.Run(json.dumps(plan.engine_json()))


def load_a_load_file(path: Path) -> None:
    engine_accepts(loadfile.load(path).to_plan(URL))


def load_a_suite(path: Path) -> None:
    suite = load_suite(str(path)).suite
    if sum(group.grid_cases * len(group.servers or suite.servers) for group in suite.groups) > EXPANDED_CASES_MAX:
        return
    for block in expand(suite, [entry.kind for entry in suite.servers], path.parent):
        for case in block.cases:
            if case.plan is not None:
                engine_accepts(case.plan.at(URL))
            else:
                assert case.sessions is not None
                # A case of neither a number of users nor a search runs the load file as written.
                level = case.sessions.users or case.sessions.capacity_start
                load = case.sessions.load if level is None else case.sessions.load.with_users(level)
                engine_accepts(load.to_plan(URL))


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
    only_model_or_one_line_error(load_a_load_file, text)


@given(yaml_texts)
def test_suite_files_become_a_model_or_one_error_line(text: bytes) -> None:
    only_model_or_one_line_error(load_a_suite, text)
