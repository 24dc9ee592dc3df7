"""The lighttpd driver against the real lighttpd, beyond the contract every kind meets
(test_contract.py): a single process for one worker, and the buffered access log flushed
without touching the backend."""

from __future__ import annotations

from gauntlet import engine
from gauntlet.servers.process import processes_under
from tests.conftest import Start
from tests.helpers.logs import access_log_lines


def test_one_worker_is_a_single_process(server: Start) -> None:
    instance = server("lighttpd", workers=1)
    assert instance.pids() == [instance.main_pid]


def test_flushing_the_access_log_leaves_the_backend_alone(server: Start) -> None:
    """The flush is a SIGHUP: to lighttpd only (PHP-FPM would reload, a CGI child would die)."""
    instance = server("lighttpd", workers=2, backend="php-fpm", access_log=True)
    pool_before = [p.pid for p in processes_under(instance.backend_pids()[0])]
    result = engine.run({"url": f"{instance.url}hello.php", "connections": 2, "requests": 50}).result
    assert result["responses"] == 50
    assert len(access_log_lines(instance, 51)) == 51, "the pages and the start's page check"
    assert [p.pid for p in processes_under(instance.backend_pids()[0])] == pool_before
