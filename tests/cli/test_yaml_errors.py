"""Bad load and suite files through the real commands: one line naming the file, the line and the
fix, exit 2, never a traceback, and nothing sent (the load file's URL is a closed port)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_errors import CLOSED, assert_one_line_error
from tests.helpers.cli_process import Finished, run_cli

LOAD = b"""sessions:
  - name: reader
    pages:
      - {name: main, path: /webtest.html}
users: 2
measure: 1s
"""
SUITE = b"""name: bad
servers: [builtin]
groups:
  - name: static
    workload: ST-1
    requests: 10
"""
GOOD = {"load": LOAD, "suite": SUITE}
#: A million values from seven lines: each list holds the one before it ten times.
ALIAS_BOMB = b"l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
    b"l%d: &l%d [%s]\n" % (i, i, b", ".join([b"*l%d" % (i - 1)] * 10)) for i in range(1, 7)
)
#: (what is wrong, bytes appended to a good file, line named (None: no line), words of the message)
BAD_YAML = [
    ("unknown tag", b"seed: !foo 3\n", 7, "the tag !foo is not supported"),
    ("python tag", b"seed: !!python/object:os.system 3\n", 7, "the tag !!python/object:os.system is not supported"),
    ("recursive alias", b"extra: &loop [1, *loop]\n", 7, "an alias refers to a value that holds it"),
    ("invalid UTF-8", b"# caf\xe9\nseed: 1\n", 7, "is not UTF-8 text (byte 0xe9)"),
    ("control character", b"seed: 1\x01\n", 7, "the character U+0001 is not allowed"),
    ("mapping as a key", b"? {a: 1}\n: 3\n", 7, "a key is a list or a mapping"),
    ("list as a key", b"[1, 2]: 3\n", 7, "a key is a list or a mapping"),
    ("duplicate key", b"extra: 1\nextra: 2\n", 8, "the key 'extra' appears twice"),
    ("line break in a key", b'"a\\nb": 1\n"a\\nb": 2\n', 8, "the key 'a\\nb' appears twice"),
    ("bad timestamp", b"seed: !!timestamp 2026-13-45\n", 7, "is not a valid timestamp"),
    ("YAML syntax", b"seed: [1\n", 8, "YAML syntax"),
    ("alias bomb", ALIAS_BOMB, 7, "the file expands to more than 100,000 values"),
    ("deep nesting", b"seed: " + b"[" * 5000 + b"]" * 5000 + b"\n", None, "nested too deep"),
]


def run_on(kind: str, text: bytes, directory: Path) -> tuple[Path, Finished]:
    """`gauntlet run --load FILE` or `gauntlet suite run FILE` on `text`."""
    path = directory / f"{kind}.yaml"
    path.write_bytes(text)
    if kind == "load":
        return path, run_cli("run", "--load", path, CLOSED)
    return path, run_cli("suite", "run", path, "--db", directory / "results.db", "-o", directory / "report.html")


@pytest.mark.parametrize("kind", GOOD)
@pytest.mark.parametrize(("wrong", "tail", "line", "message"), BAD_YAML, ids=[case[0] for case in BAD_YAML])
def test_bad_yaml_is_one_line(tmp_path: Path, kind: str, wrong: str, tail: bytes, line: int | None, message: str) -> None:
    path, done = run_on(kind, GOOD[kind] + tail, tmp_path)
    assert_one_line_error(done, message)
    assert f"{path}:{line}: " in done.stderr if line else f"{path}: " in done.stderr
    assert not (tmp_path / "report.html").exists()
    assert not list(tmp_path.glob("results.db*")), "a refused suite writes no database"


#: (file, field replaced, its new lines, line named, words of the message): numbers out of range, by name.
NUMBERS = [
    ("load", "users: 2", "users: 1000000000000000000000000000000", 5, "users: Input should be less than or equal to 1000000"),
    ("load", "measure: 1s", "measure: 1e300s", 6, "measure: duration '1e300s' is not a duration"),
    ("load", "measure: 1s", "measure: 99999999999999999999h", 6, "measure: '99999999999999999999h' is too long: give at most 720h"),
    ("load", "users: 2", "phases: [{users_per_s: -5, duration: 1s}]", 5, "phases.0.users_per_s: Input should be greater than 0"),
    ("load", "users: 2", "phases: [{users_per_s: .nan, duration: 1s}]", 5, "phases.0.users_per_s: Input should be a finite number"),
    ("load", "users: 2", "phases: [{users_per_s: .inf, duration: 1s}]", 5, "phases.0.users_per_s: Input should be a finite number"),
    ("load", "measure: 1s", "measure: 1s\nseed: -1", 7, "seed: Input should be greater than or equal to 0"),
    ("load", "measure: 1s", "measure: 1s\niterations: 1e30", 7, "iterations: Input should be a valid integer"),
    ("suite", "requests: 10", "requests: 1000000000000000000000000000000", 6, "requests: Input should be less than or equal to"),
    ("suite", "requests: 10", "duration: 1e300s", 6, "duration: duration '1e300s' is not a duration"),
    ("suite", "requests: 10", "duration: 99999999999999999999h", 6, "too long: give at most 720h"),
    ("suite", "requests: 10", "requests: 10\n    connections: 1000000000000000000000000000000", 7, "connections.0: Input should be less"),
    ("suite", "workload: ST-1", "model: rate\n    workload: ST-1\n    rate_per_s: -5", 7, "rate_per_s.0: Input should be greater than 0"),
    ("suite", "workload: ST-1", "model: rate\n    workload: ST-1\n    rate_per_s: .nan", 7, "rate_per_s.0: Input should be a finite number"),
    ("suite", "requests: 10", "requests: 10\n    connections: {from: 1, to: 1000000000000, step: 1}", 7, "values is too long: give at most 10,000"),
    ("suite", "requests: 10", "requests: 10\n    connections: {from: 1, to: .inf, step: 1}", 7, "a range's from, to and step are numbers"),
    ("suite", "requests: 10", "requests: 10\n    connections: {from: 1, to: 10000, step: 1}\n"
     "    calls_per_connection: {from: 1, to: 10000, step: 1}", 4, "groups.0: the grid stands for 100,000,000 cases"),
]


@pytest.mark.parametrize(("kind", "field", "value", "line", "message"), NUMBERS)
def test_numbers_out_of_range_are_refused_by_name(
    tmp_path: Path, kind: str, field: str, value: str, line: int, message: str
) -> None:
    path, done = run_on(kind, GOOD[kind].replace(field.encode(), value.encode()), tmp_path)
    assert_one_line_error(done, message)
    assert f"{path}:{line}: " in done.stderr


def test_a_suite_that_measures_nothing_is_refused_before_any_server_starts(tmp_path: Path) -> None:
    """Found by the fuzz of the loaders: the engine refused each case once the server had started, and
    the suite exited 0."""
    path, done = run_on("suite", SUITE.replace(b"    requests: 10\n", b""), tmp_path)
    assert_one_line_error(done, "group static measures neither a number of requests nor a time")
    assert not list(tmp_path.glob("results.db*")), "a refused suite writes no database"
