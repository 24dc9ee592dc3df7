"""The bounds table (gauntlet.bounds) walked entry by entry: each option that takes a bound refuses
the nearest values outside it by the option's name (a usage error, exit 2) and accepts its ends;
each file field refuses the same values naming the file, the line and the field. The table lies
inside what the engine's plan schema accepts, names every option and field that uses it, and
docs/bounds.md prints it."""

from __future__ import annotations

import functools
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from pydantic import BaseModel
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from gauntlet import bounds
from gauntlet.bounds import TABLE, Bound, engine_limit
from gauntlet.cli import app, main
from gauntlet.cli.options import BoundParser
from gauntlet.errors import GauntletError
from gauntlet.model import loadfile
from gauntlet.model.loadfile import LoadFile
from gauntlet.suite.load import load_suite
from gauntlet.suite.model import Suite

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_LOAD = str(ROOT / "python/gauntlet/model/loads/banking-like.yaml")
#: Arguments a command needs before its options can be parsed.
REQUIRED_ARGUMENTS = {"capacity": [SHIPPED_LOAD], "compare": ["1", "2"]}
#: The command line that gives an argument VALUE.
ARGUMENT_LINES = {
    "compare RUN_A": ["compare", "VALUE", "1"], "compare RUN_B": ["compare", "1", "VALUE"], "export RUN": ["export", "VALUE"],
    "findings RUN": ["findings", "VALUE"],
    "report RUNS": ["report", "VALUE"],
}

SUITE: dict[str, Any] = {
    "name": "walk",
    "servers": [{"kind": "builtin"}],
    "defaults": {"duration": "1s"},
    "groups": [
        {"name": "closed", "workload": "ST-1", "http_version": ["1.1", "2"]},
        {"name": "rate", "model": "rate", "workload": "ST-1", "rate_per_s": 10},
        {"name": "sessions", "model": "sessions", "load": "support-like"},
    ],
}
#: The group a field of groups[] is set in: the one whose model takes it.
GROUP_OF = {"rate_per_s": 1, "users": 2, "capacity": 2}
LOAD: dict[str, Any] = {
    "sessions": [{"name": "browse", "pages": [{"name": "p1", "path": "/a"}, {"name": "p2", "path": "/b"}]}],
    "users": 2,
    "measure": "1s",
}
LOAD_WITH_PHASES = {**{k: v for k, v in LOAD.items() if k not in ("users", "measure")},
                    "phases": [{"users_per_s": 1, "duration": "1s"}]}


def typed(bound: Bound, value: float, in_file: bool) -> Any:
    """`value` as a user would write it: durations with their unit (in microseconds, exact)."""
    if bound.unit == "duration":
        return f"{int(value)}us"
    if bound.unit == "link":
        return f"{int(value)}bit"
    if in_file:
        return int(value) if float(value).is_integer() else value
    return str(int(value)) if float(value).is_integer() else repr(value)


def outside(bound: Bound) -> Iterator[tuple[float, str]]:
    """The nearest values outside the bound, each with the words its refusal holds."""
    if bound.above_low:
        yield bound.low, f"above {bound.show(bound.low)}"
    elif bound.low > 0 or bound.unit == "number":
        yield bound.low - 1, f"at least {bound.show(bound.low)}"
    yield bound.high + 1, f"at most {bound.show(bound.high)}"


def inside(bound: Bound) -> list[float]:
    low = bound.low + (1 if bound.unit != "number" else 0.001) if bound.above_low else bound.low
    return [low, bound.high]


# The command line.


def option_params() -> Iterator[tuple[str, TyperOption | TyperArgument]]:
    """Every option and argument of every command, as ("COMMAND OPTION" or "COMMAND ARGUMENT", its parameter)."""
    def walk(command: Any, path: str) -> Iterator[tuple[str, TyperOption | TyperArgument]]:
        if isinstance(command, TyperGroup):
            for name, sub in command.commands.items():
                yield from walk(sub, f"{path} {name}".strip())
            return
        for param in command.params:
            if isinstance(param, TyperOption):
                yield f"{path} {param.opts[0]}", param
            elif isinstance(param, TyperArgument):
                yield f"{path} {param.name.upper()}", param

    yield from walk(typer.main.get_command(app), "")


def bound_of(param: TyperOption | TyperArgument) -> Bound | None:
    parser = param.type_descriptor.parameter_info.parser
    return parser.bound if isinstance(parser, BoundParser) else None


def test_every_numeric_option_is_bounded_and_the_table_names_it() -> None:
    options = list(option_params())
    numeric = {int, float, int | None, float | None, list[int] | None}
    unbounded = [where for where, param in options if bound_of(param) is None and param.type_descriptor.annotation in numeric]
    assert unbounded == [], "numeric options outside the bounds table"
    declared = {option: bound.name for bound in TABLE for option in bound.options}
    assert {where: bound.name for where, param in options if (bound := bound_of(param))} == declared


def _ran(**params: Any) -> None:
    pytest.fail(f"the command ran with {params}: its options were not refused")


@functools.cache
def gauntlet_command(build: Any = typer.main.get_command) -> Any:
    """The command tree, built once (typer takes a fifth of a second to build it), each command's
    body replaced: a value the parser lets through fails the test instead of starting a load."""
    command = build(app)
    groups = [command]
    while groups:
        for sub in groups.pop().commands.values():
            if isinstance(sub, TyperGroup):
                groups.append(sub)
            else:
                sub.callback = _ran
    return command


def subcommand(words: list[str]) -> tuple[TyperCommand, list[str]]:
    command: Any = gauntlet_command()
    while isinstance(command, TyperGroup) and words and words[0] in command.commands:
        command, words = command.commands[words[0]], words[1:]
    return command, words


OPTION_CASES = [(bound, option) for bound in TABLE for option in bound.options]


@pytest.mark.parametrize(("bound", "option"), OPTION_CASES, ids=[f"{b.name}:{o}" for b, o in OPTION_CASES])
def test_the_option_refuses_outside_its_bound_by_name_and_accepts_its_ends(
    bound: Bound, option: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(typer.main, "get_command", lambda _: gauntlet_command())
    *command, flag = option.split()
    prefix = [*command, *REQUIRED_ARGUMENTS.get(command[0], [])]

    def line(value: str) -> list[str]:
        given = ARGUMENT_LINES.get(option)
        return [value if word == "VALUE" else word for word in given] if given else [*prefix, flag, value]

    finite = [("nan", "must be a finite number"), ("inf", "must be a finite number")] if bound.unit == "number" else []
    for value, words in [*((typed(bound, v, False), w) for v, w in outside(bound)), *finite]:
        with pytest.raises(SystemExit) as exited:
            main(line(value))
        error = capsys.readouterr().err.strip()
        assert exited.value.code == 2 and len(error.splitlines()) == 1, error
        assert f"'{flag}'" in error and words in error, error
    for value in inside(bound):
        command_, args = subcommand(line(typed(bound, value, False)))
        context = command_.make_context(command[-1], args)
        given = next(p for p in command_.params if flag in getattr(p, "opts", ()) or p.name == flag.lower())
        read = context.params[given.name]
        assert (read[0] if isinstance(read, (list, tuple)) else read) == pytest.approx(value), (flag, value)


def test_the_issue_s_command_lines_are_refused_by_the_option(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The values that reached the engine as a plan's JSON and came back as "the plan's duration_us is
    not valid (invalid type: floating point `3.6e+23`, expected u64 ...)"."""
    cases = [
        (["-d", "1000000h"], "'-d' / '--duration': at most 720h, not 1000000h"),
        (["-d", "99999999999999h"], "'-d' / '--duration': at most 720h"),
        (["-n", "99999999999999999999999"], "'-n' / '--requests': at most 1,000,000,000,000"),
        (["--warmup", "99999999999999h"], "'--warmup': at most 720h"),
        (["--rate", "nan"], "'-R' / '--rate': must be a finite number above 0"),
        (["--rate", "inf"], "'-R' / '--rate': must be a finite number above 0"),
        (["--rate", "0"], "'-R' / '--rate': above 0, not 0"),
        (["-c", "1.5"], "'-c' / '--connections': a whole number from 1 to 1,000,000, not 1.5"),
        (["-d", "5x"], "'5x' is not a duration"),
    ]
    monkeypatch.setattr(typer.main, "get_command", lambda _: gauntlet_command())
    for args, words in cases:
        with pytest.raises(SystemExit) as exited:
            main(["run", "http://127.0.0.1:1/", *args])
        error = capsys.readouterr().err
        assert exited.value.code == 2 and words in error and "plan" not in error, error


# The files.


def set_field(document: dict[str, Any], field: str, value: Any) -> None:
    """`value` at `field` ("groups[].capacity.start"), in the group or list item that takes it."""
    parts = field.split(".")
    node: Any = document
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        name = part.removesuffix("[]")
        if name == "transitions":
            value = {"p1": {"end": value, "p2": 1 - value}}
        if last:
            node[name] = value
        elif part.endswith("[]"):
            node = node[name][GROUP_OF.get(parts[index + 1], 0) if name == "groups" else 0]
        else:
            node = node.setdefault(name, {})


def load_file(kind: str, document: dict[str, Any], path: Path) -> BaseModel:
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return load_suite(str(path)).suite if kind == "suite" else loadfile.load(path)


FIELD_CASES = [(bound, field) for bound in TABLE for field in bound.fields]


@pytest.mark.parametrize(("bound", "field"), FIELD_CASES, ids=[f"{b.name}:{f}" for b, f in FIELD_CASES])
def test_the_file_field_refuses_outside_its_bound_by_file_line_and_field(bound: Bound, field: str, tmp_path: Path) -> None:
    kind, _, where = field.partition(" ")
    base = SUITE if kind == "suite" else LOAD_WITH_PHASES if where.startswith("phases") else LOAD
    path = tmp_path / f"{kind}.yaml"
    for value, words in outside(bound):
        document = yaml.safe_load(yaml.safe_dump(base))
        set_field(document, where, typed(bound, value, True))
        with pytest.raises(GauntletError) as refused:
            load_file(kind, document, path)
        message = str(refused.value)
        assert message.startswith(f"{path}:") and words in message, message
        line = int(message.split(":")[1])
        named = message.split(": ")[1]
        assert named.split(".")[0] == where.split(".")[0].removesuffix("[]"), message
        key = [part for part in named.split(".") if not part.isdigit()][-1]
        assert f"{key}:" in path.read_text().splitlines()[line - 1], (message, line)
    for value in inside(bound):
        document = yaml.safe_load(yaml.safe_dump(base))
        set_field(document, where, typed(bound, value, True))
        load_file(kind, document, path)


def bounded_fields(model: type[BaseModel], prefix: str) -> Iterator[tuple[str, Bound]]:
    """Each field of `model` (and of the models it holds) whose type reads a bound, as "PATH"."""
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        for bound, inner, listed in _annotation_parts(info.annotation, info.metadata):
            if bound is not None:
                yield path, bound
            if inner is not None:
                yield from bounded_fields(inner, f"{path}{'[]' if listed else ''}.")


def _annotation_parts(annotation: Any, metadata: list[Any], listed: bool = False) -> Iterator[tuple[Bound | None, Any, bool]]:
    for item in metadata:
        reader = getattr(item, "func", None)
        if isinstance(getattr(reader, "__self__", None), Bound):
            yield reader.__self__, None, listed
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield None, annotation, listed
        return
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *extra = typing.get_args(annotation)
        yield from _annotation_parts(base, extra, listed)
        return
    for arg in typing.get_args(annotation):
        yield from _annotation_parts(arg, [], listed or origin is list)


def test_every_bounded_field_is_named_in_the_table() -> None:
    found = {f"suite {path}" for path, _ in bounded_fields(Suite, "")} | {f"load {path}" for path, _ in bounded_fields(LoadFile, "")}
    declared = {field for bound in TABLE for field in bound.fields}
    # `defaults` and a group's own fields carry the same names; think times are read by a function of their own.
    assert found - declared == set()
    assert declared - found <= {"load sessions[].think"}


# The engine and the docs.


def test_every_bound_lies_inside_what_the_engine_accepts() -> None:
    for bound in TABLE:
        for field in bound.engine:
            low, high = engine_limit(field)
            assert low <= (bound.low if bound.off is None else bound.low + 1) and bound.high <= high, (bound.name, field)


def test_the_engine_s_own_limits_are_read_from_its_schema() -> None:
    assert bounds.IO_BATCH.high == engine_limit("io_batch_us")[1] == 10_000
    assert bounds.IDLE_SEND_INTERVAL.low == engine_limit("idle.send_interval_us")[0] == 1_000


def test_docs_print_the_table() -> None:
    assert bounds.markdown_table() in (ROOT / "docs/bounds.md").read_text(), "docs/bounds.md's table differs from gauntlet.bounds.markdown_table(): paste that in its place"
