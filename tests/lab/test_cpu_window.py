"""The server's threads' CPU from /proc: processes that end while being read (a CGI server's
children, each living a few milliseconds) are skipped, not a crash of the whole suite."""

from __future__ import annotations

import os
import subprocess

from gauntlet.lab.cpu_window import thread_times

ROUNDS = 300


def test_threads_of_live_processes_are_read_and_ended_ones_skipped() -> None:
    ended = subprocess.Popen(["true"])
    ended.wait()
    found = thread_times([os.getpid(), ended.pid])
    assert os.getpid() in found and ended.pid not in found
    assert found[os.getpid()].cpu_s > 0


def test_processes_ending_while_read_are_skipped() -> None:
    """The suite run of 2026-11-28 (thesis, lighttpd with php-cgi) died on /proc/PID/task vanishing
    between its listing and its reading; here children end at the moment they are read, round after
    round (the race is not forced: each round gives it a chance)."""
    for _ in range(ROUNDS):
        children = [subprocess.Popen(["sleep", "0.001"]) for _ in range(4)]
        found = thread_times([os.getpid(), *(child.pid for child in children)])
        assert os.getpid() in found
        for child in children:
            child.wait()
