"""Server figures per completed request, as the SPECweb2005 white paper tabulates them."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from gauntlet.monitor.sampler import ServerTotals


def per_request(totals: ServerTotals, requests: int) -> dict[str, Any]:
    """The totals, and the same divided by the requests the run completed."""
    divide = (lambda value: value / requests) if requests else (lambda value: 0.0)
    return {
        "cpu_user_s": totals.cpu_user_s,
        "cpu_system_s": totals.cpu_system_s,
        "cpu_source": totals.cpu_source,
        "cpu_us_per_request": divide(totals.cpu_s * 1e6),
        "context_switches_per_request": divide(totals.voluntary_switches + totals.involuntary_switches),
        "voluntary_switches": totals.voluntary_switches,
        "involuntary_switches": totals.involuntary_switches,
        "page_faults_per_request": divide(totals.minor_faults + totals.major_faults),
        "minor_faults": totals.minor_faults,
        "major_faults": totals.major_faults,
        "interrupts_per_request": divide(totals.system_interrupts),
        "system_context_switches_per_request": divide(totals.system_context_switches),
        "pages_freed_per_request": divide(totals.system_pages_freed),
        "loopback_packets_per_request": divide(totals.loopback_packets),
        "max_processes": totals.max_processes,
        "max_threads": totals.max_threads,
        "memory": {
            role: {"processes": m.processes, "rss_bytes": m.rss_bytes, "vm_size_bytes": m.vm_size_bytes}
            for role, m in totals.memory.items()
        },
        "timeline": [asdict(point) for point in totals.timeline],
        "load_1m": totals.load_1m,
        "samples": totals.samples,
        "monitor_cpu_s": totals.monitor_cpu_s,
        "elapsed_s": totals.elapsed_s,
    }
