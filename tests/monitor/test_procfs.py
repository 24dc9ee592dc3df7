"""The /proc parsers on captured text."""

from __future__ import annotations

from gauntlet.monitor.procfs import (
    CLOCK_TICKS_PER_S,
    PAGE_BYTES,
    parse_context_switches,
    parse_net_dev,
    parse_pid_stat,
    parse_proc_stat,
    parse_vmstat_pgfree,
)

STAT = (
    "4242 (nginx: worker (x) ) S 4241 4241 4241 0 -1 4194624 1200 0 3 0 250 125 7 9 20 0 2 0 1000 "
    "11952128 1125 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0"
)


def test_pid_stat_with_spaces_and_parentheses_in_the_command() -> None:
    sample = parse_pid_stat(STAT)
    assert (sample.pid, sample.ppid, sample.comm) == (4242, 4241, "nginx: worker (x) ")
    assert (sample.minor_faults, sample.major_faults, sample.threads) == (1200, 3, 2)
    assert sample.user_s == 250 / CLOCK_TICKS_PER_S and sample.system_s == 125 / CLOCK_TICKS_PER_S
    assert (sample.children_user_s, sample.children_system_s) == (7 / CLOCK_TICKS_PER_S, 9 / CLOCK_TICKS_PER_S)
    assert (sample.children_minor_faults, sample.children_major_faults) == (0, 0)
    assert (sample.vm_size_bytes, sample.rss_bytes) == (11952128, 1125 * PAGE_BYTES)


def test_status_context_switches() -> None:
    text = "Name:\tnginx\nvoluntary_ctxt_switches:\t153\nnonvoluntary_ctxt_switches:\t7\n"
    assert parse_context_switches(text) == (153, 7)


def test_system_counters() -> None:
    assert parse_proc_stat("cpu  1 2 3\nintr 98765 1 2 3\nctxt 4321\nbtime 1\n") == (98765, 4321)
    assert parse_vmstat_pgfree("pgalloc_normal 5\npgfree 1234\npgactivate 9\n") == 1234
    net_dev = (
        "Inter-|   Receive                                                |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
        "    lo: 1000      10    0    0    0     0          0         0     2000      20    0    0    0     0       0          0\n"
        "  eth0: 5 1 0 0 0 0 0 0 6 1 0 0 0 0 0 0\n"
    )
    assert parse_net_dev(net_dev) == (30, 3000)
    assert parse_net_dev(net_dev, "eth9") == (0, 0)
