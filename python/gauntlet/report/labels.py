"""Short readable names for cases, from their params: `nginx w2 https ST-1 c100 close`."""

from __future__ import annotations

from typing import Any


def server_label(params: dict[str, Any]) -> str:
    parts = [str(params.get("server", "url"))]
    if params.get("workers") is not None:
        parts.append(f"w{params['workers']}")
    if params.get("backend"):
        backend = params["backend"]
        if params.get("backend_socket") == "tcp":
            backend += "/tcp"
        if params.get("backend_workers") is not None:
            backend += f"x{params['backend_workers']}"
        parts.append(backend)
    if params.get("protocol") == "https":
        parts.append("https" + (f"/{params['tls_version']}" if params.get("tls_version") else ""))
    return " ".join(parts)


def load_label(params: dict[str, Any]) -> str:
    parts = [str(params.get("workload") or params.get("path", ""))]
    if params.get("model") == "sessions":
        parts = [str(params.get("load", "sessions")), f"{params['users']} users" if "users" in params else ""]
    elif params.get("rate_per_s") is not None:
        parts.append(f"{params['rate_per_s']:g}/s")
    elif params.get("connections") is not None:
        parts.append(f"c{params['connections']}")
    if params.get("keepalive") is False:
        parts.append("close")
    if params.get("calls_per_connection") is not None:
        parts.append(f"{params['calls_per_connection']}/conn")
    if params.get("http_version") == "2":
        parts.append(f"h2x{params.get('streams', 1)}")
    return " ".join(part for part in parts if part)


def case_label(params: dict[str, Any], repeat: int = 0) -> str:
    """The case in a line; repeats after the first are numbered (#2, #3, ...)."""
    return f"{server_label(params)}  {load_label(params)}" + (f"  #{repeat + 1}" if repeat else "")
