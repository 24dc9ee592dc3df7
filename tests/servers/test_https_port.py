"""A lab server on an HTTP and an HTTPS port at once (`also_https`, a suite's protocol http+https):
Ecommerce's sessions walk the shop over HTTP and sign in, ship, bill and confirm over HTTPS on the
second port, the session cookie going with them; kinds whose driver has one port refuse it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gauntlet.analysis.qos import verdict
from gauntlet.engine import run
from gauntlet.errors import GauntletError
from gauntlet.model import loadfile
from gauntlet.model.loadfile import LOADS
from gauntlet.servers.registry import check_spec
from gauntlet.servers.spec import ServerSpec
from tests.conftest import Start, require_available

SPECS = [
    ServerSpec("apache-prefork", backend="mod_php", app="specweb", also_https=True),
    ServerSpec("tomcat", app="specweb", also_https=True),
]
HTTPS_PAGES = {"login", "shipping", "billing", "confirm"}
#: Runs of 3 s before the measured one, until one reached every page (a cold, busy Tomcat reached
#: one more page a run).
WARM_UP_RUNS = 10


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.kind)
def test_ecommerce_signs_in_over_the_second_https_port(spec: ServerSpec, server: Start, tmp_path: Path) -> None:
    instance = server(spec)
    assert instance.https_url is not None and instance.https_port in instance.ports
    assert instance.url.startswith("http://") and instance.https_port != instance.port
    shipped = loadfile.load(LOADS / "specweb-ecommerce.yaml")
    assert {p.name for s in shipped.sessions for p in s.pages if p.scheme == "https"} == HTTPS_PAGES
    # Its pages in order, without think time: every session fills a cart, then signs in and orders.
    pages = {page.name: page for page in shipped.sessions[0].pages}
    walk = [pages[name].model_dump(exclude_none=True) for name in ("index", "cart", "login", "shipping", "billing", "confirm")]
    path = tmp_path / "order.yaml"
    path.write_text(yaml.safe_dump({"sessions": [{"name": "order", "pages": walk}], "users": 4, "measure": "3s"}))
    load = loadfile.load(path)
    plan = load.to_plan(instance.url, instance.https_url).engine_json()
    for _ in range(WARM_UP_RUNS):  # Tomcat compiles each JSP on its first request, a second or more each
        if all(page["count"] for page in run(plan).result["sessions"]["pages"].values()):
            break
    result = run(plan).result
    pages = result["sessions"]["pages"]
    # Shipping, billing and confirm answer 403 without the signed-in customer of the session: the
    # cookie set over HTTP went to the HTTPS port and back.
    for name in HTTPS_PAGES:
        assert pages[name]["count"] > 0 and pages[name]["invalid"] == pages[name]["errors"] == 0, (name, pages[name])
    assert result["tls"]["handshakes"] > 0, "the https pages went over TLS, on connections of their own"
    assert verdict(result["sessions"]).valid


def test_without_a_second_port_a_mixed_load_on_plain_http_is_refused() -> None:
    load = loadfile.load(LOADS / "specweb-ecommerce.yaml")
    with pytest.raises(GauntletError, match="plain http") as refused:
        load.to_plan("http://127.0.0.1:8080/")
    assert "http+https" in (refused.value.fix or "")


@pytest.mark.parametrize(
    ("spec", "cause"),
    [
        (ServerSpec("nginx", also_https=True), "its driver listens on one port"),
        (ServerSpec("apache-event", tls=True, also_https=True), "served over TLS already"),
    ],
)
def test_a_second_https_port_is_refused_where_it_cannot_work(spec: ServerSpec, cause: str) -> None:
    require_available(ServerSpec(spec.kind))
    with pytest.raises(GauntletError, match=cause):
        check_spec(spec)
