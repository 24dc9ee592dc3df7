"""Load files for capacity searches on the built-in server, whose QoS verdict is known in advance."""

from __future__ import annotations


def per_user_delay_load(delay_ms: int) -> str:
    """One page, `slow`, that the built-in server holds `delay_ms` per connection open: N users see
    N x delay_ms, GOOD up to 200 ms and TOLERABLE up to 250 ms."""
    return f"""\
sessions:
  - name: one
    pages: [{{name: slow, path: "/hello?delay_per_connection_ms={delay_ms}"}}]
users: 1
measure: 1s
qos: {{good: 200ms, tolerable: 250ms}}
"""
