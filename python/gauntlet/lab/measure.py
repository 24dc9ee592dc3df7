"""One case measured the way results can be trusted: a warm-up run and discarded, then N repeats
(the server restarted between them when asked, as Deathmatch did), each with the server's
monitor, the CPU window and the bottleneck labels in its result.

`measure_run` is one engine run with its labels (suites call it through `lab.case.measure` for
every case); `measure_repeats` adds the warm-up and the repeats for `gauntlet run` and `sweep`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Self

from gauntlet import engine
from gauntlet.analysis.bottleneck import DEFAULT_ERROR_SHARE, Context, assess, stuck
from gauntlet.analysis.invariants import check_all
from gauntlet.analysis.stats import estimates_json, headline_estimates, median_index
from gauntlet.errors import GauntletError
from gauntlet.lab import local_split, observers
from gauntlet.lab.access_log import LoggedRequests
from gauntlet.lab.cpu_window import CpuWindow, client_use, with_cgroup_cpu
from gauntlet.lab.watch import Watch
from gauntlet.monitor.per_request import per_request
from gauntlet.monitor.sampler import Sampler
from gauntlet.plan import Plan
from gauntlet.route import route_to
from gauntlet.servers.backends.catalog import BACKENDS
from gauntlet.servers.sizing import limit_lines
from gauntlet.workload.pages import HELLO_PHP

if TYPE_CHECKING:
    from gauntlet.servers.base import ServerInstance

@dataclass(frozen=True)
class Settings:
    """How each case is measured, besides its plan."""

    repeats: int = 1
    restart_between: bool = False
    #: Requests run and discarded before the first repeat and after each restart (None: none).
    warmup_requests: int | None = None
    #: The declared link speed (--link), for the bandwidth ceiling.
    link_bits_per_s: float | None = None
    error_share_limit: float = DEFAULT_ERROR_SHARE


DEFAULT_SETTINGS = Settings()


@dataclass
class Measurement:
    #: The run result plus `server` (when Gauntlet started the server) and `bottleneck`.
    result: dict[str, Any]
    interrupted: bool

    @property
    def labels(self) -> list[str]:
        return list(self.result["bottleneck"]["labels"])

    @property
    def error(self) -> str | None:
        """Why the case is an error although it has a result: a watched process exited, or no
        request ended (docs/results.md, "Cases that are errors")."""
        return case_error(self.result)


def case_error(result: dict[str, Any]) -> str | None:
    if "server_exit" in result:
        return str(result["server_exit"]["message"])
    if (found := stuck(result)) is not None:
        return f"{found[0]}: {found[1]}"
    return None


@dataclass
class Repeats:
    measurements: list[Measurement] = field(default_factory=list)
    #: Ctrl-C cut the case short: the last measurement (if any) is partial.
    interrupted: bool = False

    @property
    def results(self) -> list[dict[str, Any]]:
        return [m.result for m in self.measurements]

    def _counted(self) -> list[int]:
        """The repeats a headline counts: all but the errors (a server that exited, no request
        ended), unless every one is an error."""
        ok = [i for i, m in enumerate(self.measurements) if m.error is None]
        return ok or list(range(len(self.measurements)))

    def median_index(self) -> int:
        """The repeat whose requests/s is the median of those counted: the one shown in full."""
        counted = self._counted()
        return counted[median_index([self.measurements[i].result for i in counted])]

    def median(self) -> Measurement:
        return self.measurements[self.median_index()]

    def to_json(self) -> dict[str, Any]:
        """Every repeat, each headline figure's estimate with its interval (errors left out), and
        which repeat is the median."""
        counted = [self.measurements[i].result for i in self._counted()]
        return {
            "repeats": self.results, "estimates": estimates_json(headline_estimates(counted)),
            "median_repeat": self.median_index() if self.measurements else None,
        }


class Target:
    """Where the load goes: a URL given by the user, or a path on a server Gauntlet started
    (monitored, and restartable between repeats); `announce` is told of each server started."""

    def __init__(
        self,
        url: str | None = None,
        start: Callable[[], ServerInstance] | None = None,
        path: str = "/",
        announce: Callable[[ServerInstance], None] | None = None,
    ) -> None:
        self._fixed_url = url
        self._start = start
        self._path = path
        self._announce = announce
        self.server: ServerInstance | None = None

    @property
    def url(self) -> str:
        if self.server is None:
            return self._fixed_url or ""
        return f"{self.server.url.rstrip('/')}{self._path}"

    def restart(self) -> None:
        """Stop the server and start a fresh one (a new process, maybe a new port)."""
        if self._start is None:
            return
        self.stop()
        self.server = self._start()
        if self._announce is not None:
            self._announce(self.server)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    def __enter__(self) -> Self:
        try:
            self.restart()
        except BaseException:
            self.stop()  # a Ctrl-C while announcing: no __exit__ will run
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def measure_run(
    plan: Plan,
    server: ServerInstance | None,
    settings: Settings,
    on_progress: Callable[[engine.Progress], None] | None = None,
    run_plan: engine.Runner = engine.run,
    *,
    observed: bool = True,
) -> Measurement:
    """One run of `plan`; `server` (when Gauntlet started it) is monitored. Its result gains
    `server_setup` and `server` (then) and `bottleneck` (always). The command's observers
    (lab.observers) see it begin and each second, unless it is no case (`observed`: a warm-up)."""
    feed = observers.current() if observed else None
    on_second = None if feed is None else feed.began(plan, server)
    logged = LoggedRequests(server)
    with Watch(server) as watch, CpuWindow(server.pids if server else None) as window, monitored(server) as sampler:
        if feed is not None:
            feed.monitoring(sampler)

        def measuring_began(began_us: int, counted: Callable[[], int]) -> None:
            logged.mark(counted)
            window.begin()
            if sampler is not None:
                sampler.mark()

        # The engine in this process says when measuring begins; agents' results say it afterwards.
        if run_plan is engine.run:
            outcome = engine.run(plan.engine_json(), on_progress, watch.stop, on_measuring=measuring_began, on_second=on_second)
        elif run_plan is local_split.run:
            outcome = local_split.run(plan.engine_json(), on_progress, measuring_began, watch.stop, on_second)
        else:  # agents: a server's exit is reported, but the load runs to its end
            outcome = run_plan(plan.engine_json(), on_progress)
    result = outcome.result
    if feed is not None:
        feed.measured(result)
    if watch.exit is not None:
        result["server_exit"] = watch.exit.to_json(result)
    if server is not None:
        result["server_setup"] = server.setup() | {"limits": limit_lines(server.kind, plan.all_connections(), server.holders)}
    totals = None if sampler is None else sampler.totals(measured_window_s(result))
    if totals is not None and server is not None:
        result["server"] = per_request(totals, result["requests"])
        result["server"]["php_role"] = php_role(server.spec.backend)
    context = Context(
        window_s=window.window_s,
        idle_s_by_cpu=window.idle_s_by_cpu,
        client=client_use(result),
        server=with_cgroup_cpu(window.server_use(), totals, window.window_s),
        link_bits_per_s=settings.link_bits_per_s,
        routes=tuple(outcome.routes or [route_to(plan.url).to_json()]),
        error_share_limit=settings.error_share_limit,
        machine=window.machine,
    )
    result["bottleneck"] = assess(result, context)
    result["invariants"] = check_all(result, os.cpu_count() or 1, logged.since_mark(result))
    # The watch's stop is not a Ctrl-C: the case ends as an error and what follows goes on.
    return Measurement(result, outcome.interrupted and watch.exit is None)


def measured_window_s(result: dict[str, Any]) -> tuple[float, float]:
    """The engine's measured interval on time.monotonic's clock, in seconds."""
    return result["measured_from_monotonic_us"] / 1e6, result["measured_to_monotonic_us"] / 1e6


def php_role(backend: str | None) -> str | None:
    """The monitor's role of the processes that run PHP: Apache's own workers with a module
    (mod_php), the backend's otherwise (a PHP-FPM pool, php-cgi children); None without PHP."""
    found = BACKENDS.get(backend or "")
    if found is None or found.page.path != HELLO_PHP.path:
        return None
    return "worker" if found.pool is None and not found.cgi else "backend"


def measure_repeats(
    plan: Plan,
    target: Target,
    settings: Settings,
    on_progress: Callable[[engine.Progress], None] | None = None,
    on_measured: Callable[[Repeats], None] | None = None,
    run_plan: engine.Runner = engine.run,
) -> Repeats:
    """Warm up, then measure `settings.repeats` times; `on_measured` sees the case after each repeat."""
    if settings.repeats < 1:
        raise GauntletError(f"--repeat {settings.repeats} measures nothing", "Give --repeat 1 or more")
    if settings.restart_between and target.server is None:
        raise GauntletError(
            "--restart-between restarts a server Gauntlet started, and this target is a URL",
            "Leave out the URL or the option",
        )
    repeats = Repeats()
    for index in range(settings.repeats):
        # A server that exited in the repeat before is started again, as with --restart-between.
        died = bool(repeats.measurements) and "server_exit" in repeats.measurements[-1].result
        restarted = index > 0 and (settings.restart_between or died)
        if restarted:
            target.restart()
        if (index == 0 or restarted) and settings.warmup_requests and warm_up(plan, target.url, settings.warmup_requests, run_plan):
            repeats.interrupted = True
            break
        measured = measure_run(plan.at(target.url), target.server, settings, on_progress, run_plan)
        repeats.measurements.append(measured)
        repeats.interrupted = measured.interrupted
        if on_measured is not None:
            on_measured(repeats)
        if repeats.interrupted:
            break
    return repeats


def warm_up(plan: Plan, url: str, requests: int, run_plan: engine.Runner = engine.run) -> bool:
    """Run `requests` requests of the plan and discard them; True when Ctrl-C cut it short."""
    if plan.sessions is not None:
        raise GauntletError("--warmup-requests does not apply to sessions", "Use the load file's warm-up window")
    return run_plan(plan.at(url).warm_up(requests).engine_json(), None).interrupted


@contextlib.contextmanager
def monitored(server: ServerInstance | None) -> Iterator[Sampler | None]:
    """Sample the server's process tree (and its backend pool's, and its cgroup's CPU) while the load
    runs, when Gauntlet started the server."""
    if server is None:
        yield None
        return
    with Sampler.of(server) as sampler:
        yield sampler
