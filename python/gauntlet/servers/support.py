"""What every driver checks before it starts a server: that the program is installed, and that the
spec asks nothing the kind cannot honour (refused with the reason, never ignored: a case that asked
for it would otherwise measure something else than it says)."""

from __future__ import annotations

from gauntlet.errors import GauntletError
from gauntlet.servers.spec import ServerSpec


def installed(program: str | None, name: str, package: str) -> str:
    """The program's path, or the one-line error that says how to install it."""
    if program is None:
        raise GauntletError(f"{name} is not installed", f"install it: apt-get install {package}")
    return program


def unsupported(kind: str, setting: str, why: str) -> GauntletError:
    return GauntletError(f"{kind} does not support {setting}: {why}", f"leave {setting} out of {kind} cases")


def setting(spec: ServerSpec, name: str, default: int) -> int:
    """The spec's `name` (a count or seconds, 1 or more), or the driver's default when it is unset."""
    value = getattr(spec, name)
    if value is None:
        return default
    if value < 1:
        raise GauntletError(f"{spec.kind} needs {name} of 1 or more, got {value}", f"set {name} to 1 or more")
    return int(value)
