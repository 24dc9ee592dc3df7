"""A study's findings as claims the lab can judge: what the paper concluded, where it says so, and
which of a run's cases measure it (docs/findings.md).

Three kinds, each naming the figure it is about and a filter (`where`) on the cases' params:
- `order`: tiers of values of one param (servers, backends), best first: every member of a tier
  beats every member of the next on the figure, in every cell the run measured;
- `ratio`: the figure at one value of a param over the figure at another, within a range;
- `held`: tiers of servers by the highest level of an axis (connections, offered rate, arrival
  phase) at which they still held the load, best first.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Claim(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    #: A short name, unique in the suite: the claim's id in `gauntlet findings --json`.
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    #: The claim in words, as the lab states it.
    claim: str = Field(min_length=1)
    #: Where the paper says so: section, figure or table.
    source: str = Field(min_length=1)
    #: The paper's own figures for it, in words ("lighttpd 16,500 req/s, nginx 17,000, Apache 15,000").
    paper: str = Field(min_length=1)
    #: The cases that measure it: params that must have these values (a list: any of them).
    where: dict[str, Any] = {}
    #: Params in which the compared cases may differ besides the one compared (a PHP and a JSP
    #: page differ in backend and opcache as well as in server).
    ignore: list[str] = []


class OrderClaim(_Claim):
    kind: Literal["order"]
    figure: str
    #: The param whose values are ranked (server, backend, ...).
    by: str
    #: Tiers of that param's values, the best first; within a tier the order is not claimed.
    order: list[list[Any]] = Field(min_length=2)
    #: Whether a higher value of the figure is better (requests/s) or a lower one (CPU per request).
    higher_is_better: bool = True


class RatioClaim(_Claim):
    kind: Literal["ratio"]
    #: A stored figure, or CAPACITY: the most simultaneous users a capacity search found QoS-valid.
    figure: str
    #: The param that differs between the two sides, and its value on each.
    by: str
    numerator: Any
    denominator: Any
    at_least: float | None = Field(default=None, gt=0)
    at_most: float | None = Field(default=None, gt=0)
    #: Where two capacity searches' figures are compared: at each level both probed (`equal load`),
    #: or each at its own capacity, its largest valid level (`capacity`: as a paper that tabulates
    #: each configuration's figures at its most sessions).
    compared_at: Literal["equal load", "capacity"] = "equal load"

    @model_validator(mode="after")
    def bounded(self) -> RatioClaim:
        if self.at_least is None and self.at_most is None:
            raise ValueError("a ratio claim gives at_least, at_most or both")
        if self.compared_at == "capacity" and self.figure == CAPACITY:
            raise ValueError("a capacity ratio is compared at capacity already: leave compared_at out")
        if self.at_least is not None and self.at_most is not None and self.at_least > self.at_most:
            raise ValueError("a ratio claim's at_least is above its at_most")
        return self


class HeldClaim(_Claim):
    kind: Literal["held"]
    #: The level that grows: a param of the cases (connections, rate_per_s) or `phase` (the
    #: arrival phases of one sessions case, in their order).
    axis: str
    #: Servers (or values of `by`) in tiers by the highest level held, the best first.
    by: str = "server"
    order: list[list[Any]] = Field(min_length=2)
    #: A case holds its level when at most this share of its requests failed; a sessions case or
    #: phase holds when it is QoS-valid (SPECweb's rules); a rate case also needs the offered rate.
    failed_share_at_most: float = Field(default=0.05, ge=0, le=1)


#: The figure of a capacity search: its interval runs from the last valid to the first invalid level.
CAPACITY = "capacity"

Claim = Annotated[OrderClaim | RatioClaim | HeldClaim, Field(discriminator="kind")]
