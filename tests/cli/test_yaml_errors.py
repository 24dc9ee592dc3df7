"""Bad load and suite files through the real commands: one line naming the file, the line and the
fix, exit 2, never a traceback, and nothing sent (the load file's URL is a closed port)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gauntlet.errors import GauntletError
from gauntlet.model import loadfile
from gauntlet.suite.load import load_suite

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
    ("load", "users: 2", "users: 1000000000000000000000000000000", 5, "users: at most 1,000,000, not 1000000000000000000000000000000"),
    ("load", "measure: 1s", "measure: 1e300s", 6, "measure: '1e300s' is not a duration"),
    ("load", "measure: 1s", "measure: 99999999999999999999h", 6, "measure: at most 720h, not 99999999999999999999h"),
    ("load", "users: 2", "phases: [{users_per_s: -5, duration: 1s}]", 5, "phases.0.users_per_s: above 0, not -5"),
    ("load", "users: 2", "phases: [{users_per_s: .nan, duration: 1s}]", 5, "phases.0.users_per_s: must be a finite number above 0"),
    ("load", "users: 2", "phases: [{users_per_s: .inf, duration: 1s}]", 5, "phases.0.users_per_s: must be a finite number above 0"),
    ("load", "measure: 1s", "measure: 1s\nseed: -1", 7, "seed: at least 0, not -1"),
    ("load", "measure: 1s", "measure: 1s\niterations: 1e30", 7, "iterations: '1e30' is not a count"),
    ("suite", "requests: 10", "requests: 1000000000000000000000000000000", 6, "requests: at most 1,000,000,000,000"),
    ("suite", "requests: 10", "duration: 1e300s", 6, "duration: '1e300s' is not a duration"),
    ("suite", "requests: 10", "duration: 99999999999999999999h", 6, "duration: at most 720h, not 99999999999999999999h"),
    ("suite", "requests: 10", "requests: 10\n    connections: 1000000000000000000000000000000", 7, "connections.0: at most 1,000,000"),
    ("suite", "workload: ST-1", "model: rate\n    workload: ST-1\n    rate_per_s: -5", 7, "rate_per_s.0: above 0, not -5"),
    ("suite", "workload: ST-1", "model: rate\n    workload: ST-1\n    rate_per_s: .nan", 7, "rate_per_s.0: must be a finite number above 0"),
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


#: Before the size check PyYAML took 7 to 11 s to refuse a 5 MB one-line file.
BIG_FILE_BYTES = 5_000_000


@pytest.mark.parametrize("kind", GOOD)
def test_a_large_file_is_refused_by_its_size_before_parsing(tmp_path: Path, kind: str) -> None:
    path = tmp_path / f"{kind}.yaml"
    path.write_bytes(GOOD[kind] + b"x: " + b"x" * (BIG_FILE_BYTES - len(GOOD[kind]) - 4) + b"\n")
    began = time.perf_counter()
    with pytest.raises(GauntletError) as refused:
        load_suite(str(path)) if kind == "suite" else loadfile.load(path)
    elapsed_s = time.perf_counter() - began
    assert refused.value.cause == f"{path}: the {kind} file is 5,000,000 bytes, over the limit of 1,048,576 bytes (1 MiB)"
    assert elapsed_s < 0.5, f"{elapsed_s:.3f} s"
    _, done = run_on(kind, path.read_bytes(), tmp_path)
    assert_one_line_error(done, "bytes, over the limit of 1,048,576 bytes (1 MiB)")


def test_an_endless_file_is_read_only_up_to_the_limit() -> None:
    """/dev/zero never ends: the loader reads one byte past the limit, not the whole file."""
    assert_one_line_error(run_cli("run", "--load", "/dev/zero", CLOSED), "/dev/zero: the load file is over the limit of 1,048,576 bytes (1 MiB)")
