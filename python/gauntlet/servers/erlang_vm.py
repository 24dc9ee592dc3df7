"""The Erlang VM a server under test runs in (Yaws, inets httpd, MochiWeb): `erl` in the
foreground without a shell and without distribution (no `-sname`), so no epmd is started or left
behind; `workers` is the number of schedulers (`+S N:N`, threads named `N_scheduler`), and
`scheduler_busy_wait` off is `+sbwt none` for all three kinds of scheduler: an idle scheduler
sleeps at once instead of spinning first (CPU the kernel counts to the server though it serves nothing)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from gauntlet.servers.base import find_binary
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.support import setting
from gauntlet.servers.tls_pin import TlsPin

ERLANG_LIB = Path("/usr/lib/erlang/lib")
#: The server kinds that run in the VM.
ERLANG_KINDS = ("yaws", "inets", "mochiweb")
#: Logging to stderr in one line an event (templates/erlang-sys.config.j2), rendered as `sys.config`.
SYS_CONFIG = {"erlang-sys.config.j2": "sys.config"}
VSN = re.compile(r'\{vsn,\s*"([^"]+)"\}')


def erl_binary() -> str | None:
    return find_binary("erl")


def erl_with(application: str) -> str | None:
    """`erl`, when the Erlang application is installed too (None otherwise)."""
    return erl_binary() if application_dir(application) else None


def application_dir(name: str) -> Path | None:
    """An installed Erlang application's directory (/usr/lib/erlang/lib/inets-8.2.2, .../mochiweb)."""
    found = sorted(path.parent.parent for path in ERLANG_LIB.glob(f"{name}*/ebin/{name}.app"))
    return found[-1] if found else None


def application_version(name: str) -> str:
    """The `vsn` of an installed application's .app file."""
    directory = application_dir(name)
    found = VSN.search((directory / "ebin" / f"{name}.app").read_text()) if directory else None
    return found.group(1) if found else "unknown"


def otp_version() -> str:
    """The Erlang/OTP release (25.2.3): Debian's erlang-* packages carry its version."""
    found = sorted(Path("/usr/lib/erlang/releases").glob("*/OTP_VERSION"))
    return found[-1].read_text().strip() if found else "unknown"


#: The flags that stop the normal, dirty CPU and dirty I/O schedulers' busy wait.
NO_BUSY_WAIT = ("+sbwt", "none", "+sbwtdcpu", "none", "+sbwtdio", "none")


def vm_argv(erl: str, spec: ServerSpec, workdir: Path) -> list[str]:
    """`erl -noinput [+S N:N] [+sbwt none ...] -config WORKDIR/sys` (no `workers`: the VM's own
    choice, a scheduler per CPU)."""
    schedulers = setting(spec, "workers", 0)
    schedulers_flag = ["+S", f"{schedulers}:{schedulers}"] if schedulers else []
    busy_wait_flags = [] if spec.scheduler_busy_wait else list(NO_BUSY_WAIT)
    return [erl, "-noinput", *schedulers_flag, *busy_wait_flags, "-config", str(workdir / "sys")]


def eval_argv(erl: str, spec: ServerSpec, script: str) -> Callable[[Path], list[str]]:
    """The command line, given the rendered config's path: the VM evaluating the start script
    rendered beside it as `script` (it starts the server, or ends the VM with one line saying why)."""

    def argv(config: Path) -> list[str]:
        return [*vm_argv(erl, spec, config.parent), "-eval", (config.parent / script).read_text()]

    return argv


def ssl_versions(pin: TlsPin) -> str:
    """Erlang ssl's `versions` list for what `pin` allows, newest first: `'tlsv1.3', 'tlsv1.2'`."""
    return ", ".join(f"'tlsv{version}'" for version in reversed(pin.versions))


def vm_env(workdir: Path) -> dict[str, str]:
    """HOME in the work dir (Yaws keeps its control file there; erl reads ~/.erlang.cookie only with
    distribution); a crash dump would only be deleted with the work dir, so none is written."""
    return {"HOME": str(workdir), "ERL_CRASH_DUMP_SECONDS": "0"}
