"""The access log is followed by offset: each call reads only what was appended since the last,
counts complete lines, and leaves out the lines that are no request (the HTTP/2 preface marker)."""

from __future__ import annotations

from pathlib import Path

from gauntlet.lab.access_log import LogFollower


def test_each_call_reads_only_what_was_appended_and_counts_complete_lines(tmp_path: Path) -> None:
    log = tmp_path / "access.log"
    log.write_bytes(b"before the mark\n")
    follower = LogFollower(log.stat().st_size, None)
    assert follower.lines_after(log) == 0
    with log.open("ab") as file:
        file.write(b"GET /a 200\nGET /b 200\nGET /c")
    assert follower.lines_after(log) == 2, "the line still being written is not counted yet"
    # Bytes already counted are not read again: overwriting them in place changes nothing.
    log.write_bytes(log.read_bytes().replace(b"GET /a 200\n", b"\n" * len(b"GET /a 200\n")))
    with log.open("ab") as file:
        file.write(b" 200\n")
    assert follower.lines_after(log) == 3


def test_lines_holding_the_marker_are_no_requests(tmp_path: Path) -> None:
    log = tmp_path / "access.log"
    log.write_bytes(b"")
    follower = LogFollower(0, b"PRI * HTTP/2.0")
    with log.open("ab") as file:
        file.write(b'"PRI * HTTP/2.0" 400\nGET / 200\n"PRI * HT')
    assert follower.lines_after(log) == 1
    with log.open("ab") as file:
        file.write(b'TP/2.0" 400\nGET / 200\n')
    assert follower.lines_after(log) == 2, "a marker split across two reads is still recognised"
