"""Options that several commands share, declared once."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from gauntlet.bounds import RUN_ID, STREAMS, Bound

_METAVARS = {"duration": "D", "count": "N", "number": "NUMBER", "link": "SPEED"}


class BoundParser:
    """An option's value read and checked by its entry of the bounds table; a value out of it is
    a usage error that click words with the option's name ("Invalid value for '-d' / '--duration':
    at most 720h, not 1000000h")."""

    def __init__(self, bound: Bound) -> None:
        self.bound = bound
        self.__name__ = bound.name

    def __call__(self, value: str | float) -> Any:
        try:
            return self.bound.from_option(value)
        except ValueError as err:
            raise typer.BadParameter(str(err)) from None


def bounded(bound: Bound, *names: str, help: str, **settings: Any) -> Any:
    """A typer option whose value `bound` reads and checks; its help ends with the range."""
    return typer.Option(
        *names, parser=BoundParser(bound), metavar=_METAVARS[bound.unit], help=f"{help} ({bound.range_text()})", **settings
    )


def run_id(metavar: str, help: str) -> Any:
    """A run id argument, within SQLite's integers; `metavar` names it in help and errors."""
    return typer.Argument(parser=BoundParser(RUN_ID), metavar=metavar, help=help)


#: Where the measuring commands store their runs and where report, compare and export read them, unless --db says.
DEFAULT_DB_PATH = Path("results.db")
DbOption = Annotated[Path, typer.Option("--db", help="The results database (SQLite file)")]
NoStoreOption = Annotated[bool, typer.Option("--no-store", help="Keep the results out of the results database")]
Http2Option = Annotated[
    bool, typer.Option("--http2", help="HTTP/2: h2 through ALPN for https://, h2c with prior knowledge for http://")
]
StreamsOption = Annotated[int | None, bounded(STREAMS, "--streams", help="--http2: concurrent streams per connection (default 1)")]


def store_path(db: Path, no_store: bool) -> Path | None:
    """Where a measuring command stores its run: --db, or nowhere with --no-store."""
    return None if no_store else db


def with_options(group: type[Any], name: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """A command whose parameter `name` is a `group`, a dataclass of options declared once (each
    field an annotated option with its default): the command line takes each field as an option
    of its own, after the command's own options, and the command receives them as one `group`."""

    def command(func: Callable[..., int]) -> Callable[..., int]:
        hints = typing.get_type_hints(group, include_extras=True)
        shared = [
            inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY, default=field.default, annotation=hints[field.name])
            for field in dataclasses.fields(group)
        ]
        own = inspect.signature(func, eval_str=True)

        @functools.wraps(func)
        def with_group(**values: Any) -> int:
            options = group(**{p.name: values.pop(p.name) for p in shared})
            return func(**values, **{name: options})

        # Keyword-only after the command's own: click reads every option by name.
        own_parameters = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own.parameters.values() if p.name != name]
        with_group.__signature__ = own.replace(parameters=[*own_parameters, *shared])  # type: ignore[attr-defined]
        return with_group

    return command
