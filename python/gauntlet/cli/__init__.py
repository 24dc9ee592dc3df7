"""The `gauntlet` command. Each command file parses options and calls the library, nothing else.

The error boundary is here: a GauntletError or a usage mistake becomes one line on stderr and exit
code 2, never a traceback.
"""

from __future__ import annotations

import sys

import click
import typer

from gauntlet.cli import run, serve, workload
from gauntlet.errors import GauntletError

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130

app = typer.Typer(
    name="gauntlet",
    help="A web server benchmarking lab: native load engine, built-in server, measurements.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("run", no_args_is_help=False)(run.run_command)
app.command("serve")(serve.serve_command)
app.add_typer(workload.app, name="workload")


def fail(message: str) -> None:
    print(f"gauntlet: error: {message}", file=sys.stderr)
    sys.exit(EXIT_USER_ERROR)


def main(argv: list[str] | None = None) -> None:
    command = typer.main.get_command(app)
    try:
        code = command.main(args=argv, prog_name="gauntlet", standalone_mode=False)
    except GauntletError as err:
        fail(str(err))
    except click.exceptions.NoArgsIsHelpError as err:
        print(err.ctx.get_help() if err.ctx else "", file=sys.stderr)
        sys.exit(EXIT_USER_ERROR)
    except click.UsageError as err:
        where = f"gauntlet {err.ctx.info_name}" if err.ctx and err.ctx.info_name != "gauntlet" else "gauntlet"
        fail(f"{err.format_message().rstrip('.')}. Run '{where} --help' for the options")
    except click.exceptions.Exit as exit_:
        sys.exit(exit_.exit_code)
    except click.Abort:
        print("gauntlet: interrupted", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    except KeyboardInterrupt:
        print("gauntlet: interrupted", file=sys.stderr)
        sys.exit(EXIT_INTERRUPTED)
    sys.exit(code if isinstance(code, int) else 0)
