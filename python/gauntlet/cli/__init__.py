"""The `gauntlet` command. Each command file parses options and calls the library, nothing else.

The error boundary is here: a GauntletError or a usage mistake becomes one line on stderr and exit
code 2, never a traceback.
"""

from __future__ import annotations

import os
import sys

from typing import Any

import typer
from typer.core import TyperGroup
from typer._click.exceptions import NoArgsIsHelpError, UsageError

from gauntlet.cli import (
    calibrate, capacity, compare, doctor, export, findings, noise, report, run, serve, servers, signals, suite, sweep,
    watching, workload,
)
from gauntlet.errors import GauntletError

EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 1

#: `gauntlet calibrate noise` is a command of its own beside `gauntlet calibrate [URL]`, whose
#: argument would otherwise take the word: the root resolves the pair first.
NOISE = ("calibrate", "noise")


class Commands(TyperGroup):
    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        if tuple(args[:2]) == NOISE:
            return " ".join(NOISE), self.commands["-".join(NOISE)], args[2:]
        return super().resolve_command(ctx, args)


app = typer.Typer(
    cls=Commands,
    name="gauntlet",
    help="A web server benchmarking lab: native load engine, built-in server, measurements.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("run", no_args_is_help=False)(run.run_command)
app.command("serve")(serve.serve_command)
app.command("capacity")(capacity.capacity_command)
app.command("report")(report.report_command)
app.command("compare")(compare.compare_command)
app.command("export")(export.export_command)
app.command("findings")(findings.findings_command)
app.command("doctor")(doctor.doctor_command)
app.command("calibrate", epilog="gauntlet calibrate noise: this machine's noise floor, for compare (see its --help)")(
    calibrate.calibrate_command
)
app.command("-".join(NOISE), hidden=True)(noise.noise_command)
app.add_typer(suite.app, name="suite")
app.command("servers")(servers.servers_command)
app.add_typer(sweep.app, name="sweep")
app.add_typer(workload.app, name="workload")


def fail(message: str) -> None:
    print(f"gauntlet: error: {message}", file=sys.stderr)
    sys.exit(EXIT_USER_ERROR)


def main(argv: list[str] | None = None) -> None:
    command = typer.main.get_command(app)
    signals.end_like_ctrl_c()
    try:
        args = watching.with_default_address(sys.argv[1:] if argv is None else argv)
        code = command.main(args=args, prog_name="gauntlet", standalone_mode=False)
    except GauntletError as err:
        fail(str(err))
    except NoArgsIsHelpError as err:
        print(err.format_message(), file=sys.stderr)
        sys.exit(EXIT_USER_ERROR)
    except UsageError as err:
        where = err.ctx.command_path if err.ctx else "gauntlet"
        fail(f"{err.format_message().rstrip('.')}. Run '{where} --help' for the options")
    except (typer.Abort, KeyboardInterrupt):
        print("gauntlet: interrupted", file=sys.stderr)
        sys.exit(signals.interrupted_exit_code(EXIT_INTERRUPTED))
    except BrokenPipeError:
        # The reader of stdout went away (`gauntlet ... | head`): nothing left to say, and nowhere to say it.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(EXIT_BROKEN_PIPE)
    if code == EXIT_INTERRUPTED:
        code = signals.interrupted_exit_code(EXIT_INTERRUPTED)
    sys.exit(code if isinstance(code, int) else 0)
