"""Load files: what they turn into, and every mistake reported with its file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from gauntlet.errors import GauntletError
from gauntlet.model.loadfile import load

GOOD = """\
sessions:
  - name: browse
    weight: 2
    think: {exponential: 5s}
    pages:
      - {name: home, path: /webtest.html, embedded: [/image_small.gif]}
      - name: big
        path: /image_large.jpg
        download: true
users: 10
warm_up: 2s
measure: 1m
ramp_down: 500ms
if_modified_since: 0.25
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "load.yaml"
    path.write_text(text)
    return path


def test_a_good_file_becomes_an_engine_plan(tmp_path: Path) -> None:
    plan = load(write(tmp_path, GOOD)).to_plan("http://127.0.0.1:8080/").engine_json()
    sessions = plan["sessions"]
    assert (plan["connections"], plan["warmup_us"], plan["duration_us"]) == (20, 2_000_000, 60_000_000)
    assert sessions["types"][0]["think"] == {"kind": "exponential", "mean_us": 5_000_000}
    big = {"name": "big", "path": "/image_large.jpg", "embedded": [], "download": True, "scheme": "http", "method": "GET"}
    assert sessions["types"][0]["pages"][1] == big
    assert (sessions["users"], sessions["phases"], sessions["rampdown_us"]) == (10, None, 500_000)
    assert sessions["qos"]["good_us"] == 2_000_000 and sessions["if_modified_since_share"] == 0.25


def test_phases_and_think_forms(tmp_path: Path) -> None:
    text = GOOD.replace("users: 10\n", "phases:\n  - {users_per_s: 100, duration: 30m}\n  - {users_per_s: 450, duration: 10m}\n")
    text = text.replace("measure: 1m\n", "").replace("{exponential: 5s}", "{uniform: [1s, 3s]}")
    plan = load(write(tmp_path, text)).to_plan("http://x/").engine_json()
    assert plan["sessions"]["phases"] == [
        {"users_per_s": 100, "duration_us": 1_800_000_000},
        {"users_per_s": 450, "duration_us": 600_000_000},
    ]
    assert plan["sessions"]["types"][0]["think"] == {"kind": "uniform", "min_us": 1_000_000, "max_us": 3_000_000}
    assert "duration_us" not in plan


@pytest.mark.parametrize(
    ("think", "scaled"),
    [
        ("{exponential: 5s}", {"kind": "exponential", "mean_us": 1_250_000}),
        ("{uniform: [1s, 3s]}", {"kind": "uniform", "min_us": 250_000, "max_us": 750_000}),
        ("2s", {"kind": "fixed", "mean_us": 500_000}),
    ],
)
def test_think_scale_shortens_every_think_time(tmp_path: Path, think: str, scaled: dict[str, object]) -> None:
    """A quick variant's `think_scale: 0.25` (an override of the file's top level) scales each form."""
    path = write(tmp_path, GOOD.replace("{exponential: 5s}", think))
    plan = load(path, {"think_scale": 0.25}).to_plan("http://x/").engine_json()
    assert plan["sessions"]["types"][0]["think"] == scaled
    with pytest.raises(GauntletError, match="think_scale"):
        load(path, {"think_scale": 0})


@pytest.mark.parametrize(
    ("change", "line", "field", "message"),
    [
        (("    weight: 2\n", "    weight: 2\n    colour: red\n"), 4, "sessions.0.colour", "Extra inputs are not permitted"),
        (("users: 10\n", "users: 10\nphases: [{users_per_s: -5, duration: 1s}]\n"), 11, "phases.0.users_per_s", "above 0, not -5"),
        (("    pages:\n      - {name: home, path: /webtest.html, embedded: [/image_small.gif]}\n      - name: big\n        path: /image_large.jpg\n        download: true\n", "    pages: []\n"), 5, "sessions.0.pages", "at least 1 item"),
        (("{exponential: 5s}", "5"), 4, "sessions.0.think", "has no unit"),
        (("measure: 1m", "measure: 60"), 12, "measure", "has no unit"),
        (("users: 10\n", ""), 1, "(top)", "give either users"),
    ],
)
def test_mistakes_name_the_line_and_field(tmp_path: Path, change: tuple[str, str], line: int, field: str, message: str) -> None:
    path = write(tmp_path, GOOD.replace(*change))
    with pytest.raises(GauntletError) as raised:
        load(path)
    cause = raised.value.cause
    assert cause.startswith(f"{path}:{line}: {field}: "), cause
    assert message in cause and "\n" not in str(raised.value)


def test_yaml_syntax_errors_name_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("users: 10", "users: [10"))
    with pytest.raises(GauntletError, match=rf"{path}:1[0-9]: YAML syntax"):
        load(path)


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(GauntletError, match="cannot read the load file"):
        load(tmp_path / "nope.yaml")
