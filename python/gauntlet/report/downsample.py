"""Largest-Triangle-Three-Buckets downsampling (Steinarsson 2013, as vegeta's plot uses): keeps the
first and last points and, from each bucket between, the point that spans the largest triangle with
its neighbours, so spikes survive where plain decimation would drop them."""

from __future__ import annotations

Point = tuple[float, float]


def lttb(points: list[Point], threshold: int) -> list[Point]:
    """At most `threshold` of `points` (sorted by x); all of them when there are not more."""
    if threshold >= len(points) or threshold < 3:
        return list(points)
    kept = [points[0]]
    bucket_size = (len(points) - 2) / (threshold - 2)
    previous = points[0]
    for bucket in range(threshold - 2):
        start = int(bucket * bucket_size) + 1
        end = int((bucket + 1) * bucket_size) + 1
        next_end = min(int((bucket + 2) * bucket_size) + 1, len(points))
        following = points[end:next_end] or [points[-1]]
        mean_x = sum(p[0] for p in following) / len(following)
        mean_y = sum(p[1] for p in following) / len(following)
        best = max(
            points[start:end],
            key=lambda p: abs((previous[0] - mean_x) * (p[1] - previous[1]) - (previous[0] - p[0]) * (mean_y - previous[1])),
        )
        kept.append(best)
        previous = best
    kept.append(points[-1])
    return kept
