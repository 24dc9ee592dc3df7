"""The types of the suite and load files' numeric fields, one per entry of the bounds table
(gauntlet.bounds) that a file uses: each reads its value through the entry, so a file refuses what
the matching option refuses, in the same words ("at most 720h, not 1000000h")."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator

from gauntlet.bounds import (
    ARRIVAL_RATE, CALLS_PER_CONNECTION, CONNECTIONS, DOWNLOAD_RATE, DURATION, HEAP_MB, IDLE, IDLE_SEND_INTERVAL, KEEPALIVE_REQUESTS,
    KEEPALIVE_TIMEOUT_S, PROBES, QOS_TIME, RATE, REPEATS, REQUESTS, RESTART_EVERY, SEED, SHARE, STREAMS, THINK_SCALE, THREADS,
    TIMEOUT, USERS, WARMUP, WEIGHT, WORKERS, IO_BATCH,
)

Duration = Annotated[int, BeforeValidator(DURATION.from_file)]
Timeout = Annotated[int, BeforeValidator(TIMEOUT.from_file)]
Warmup = Annotated[int, BeforeValidator(WARMUP.from_file)]
IoBatch = Annotated[int, BeforeValidator(IO_BATCH.from_file)]
QosTime = Annotated[int, BeforeValidator(QOS_TIME.from_file)]
IdleSendInterval = Annotated[int, BeforeValidator(IDLE_SEND_INTERVAL.from_file)]
Requests = Annotated[int, BeforeValidator(REQUESTS.from_file)]
CallsPerConnection = Annotated[int, BeforeValidator(CALLS_PER_CONNECTION.from_file)]
Connections = Annotated[int, BeforeValidator(CONNECTIONS.from_file)]
Threads = Annotated[int, BeforeValidator(THREADS.from_file)]
Streams = Annotated[int, BeforeValidator(STREAMS.from_file)]
Idle = Annotated[int, BeforeValidator(IDLE.from_file)]
Rate = Annotated[float, BeforeValidator(RATE.from_file)]
Users = Annotated[int, BeforeValidator(USERS.from_file)]
ArrivalRate = Annotated[float, BeforeValidator(ARRIVAL_RATE.from_file)]
DownloadRate = Annotated[float, BeforeValidator(DOWNLOAD_RATE.from_file)]
Share = Annotated[float, BeforeValidator(SHARE.from_file)]
Weight = Annotated[float, BeforeValidator(WEIGHT.from_file)]
ThinkScale = Annotated[float, BeforeValidator(THINK_SCALE.from_file)]
Seed = Annotated[int, BeforeValidator(SEED.from_file)]
Repeats = Annotated[int, BeforeValidator(REPEATS.from_file)]
RestartEvery = Annotated[int, BeforeValidator(RESTART_EVERY.from_file)]
Probes = Annotated[int, BeforeValidator(PROBES.from_file)]
Workers = Annotated[int, BeforeValidator(WORKERS.from_file)]
HeapMb = Annotated[int, BeforeValidator(HEAP_MB.from_file)]
KeepaliveTimeout = Annotated[int, BeforeValidator(KEEPALIVE_TIMEOUT_S.from_file)]
KeepaliveRequests = Annotated[int, BeforeValidator(KEEPALIVE_REQUESTS.from_file)]
