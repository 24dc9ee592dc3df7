"""The built-in server's own counters, read over HTTP from its stats route."""

from __future__ import annotations

import json
import urllib.request

from gauntlet.servers.base import ServerInstance


def server_stats(server: ServerInstance) -> dict[str, int]:
    """Requests and connections the server saw; this query's own connection is counted, its request is not."""
    with urllib.request.urlopen(f"{server.url}__gauntlet/stats", timeout=5) as response:
        return json.load(response)
