"""Load files with a transition table, POST forms and https pages: the plan they become, each
mistake as one line naming its row, and a walk run against the built-in server, whose session
route sets a cookie at login and echoes the Cookie header and the body of every request."""

from __future__ import annotations

from pathlib import Path

import pytest

from gauntlet.analysis.qos import verdict
from gauntlet.engine import run
from gauntlet.errors import GauntletError
from gauntlet.model.loadfile import load
from gauntlet.servers.base import ServerInstance
from tests.model.test_loadfile import write

BANK = """\
sessions:
  - name: bank
    start: login
    transitions:
      login: {account: 1}
      account: {account: 0.5, logout: 0.5}
      logout: {end: 1}
    pages:
      - {name: login, path: '/__gauntlet/session?login=ann', expect: 'cookie=[]'}
      - {name: account, path: /__gauntlet/session, method: POST, body: 'amount=5',
         expect: 'method=[POST] cookie=[gauntlet_user=ann] body=[amount=5]'}
      - {name: logout, path: '/__gauntlet/session?logout=1', expect: 'cookie=[gauntlet_user=ann]'}
users: 3
measure: 1s
"""


def test_the_walk_and_the_forms_reach_the_plan(tmp_path: Path) -> None:
    plan = load(write(tmp_path, BANK)).to_plan("http://127.0.0.1:8080/").engine_json()
    bank = plan["sessions"]["types"][0]
    assert (bank["start"], bank["transitions"]["account"]) == ("login", {"account": 0.5, "logout": 0.5})
    assert (bank["pages"][1]["method"], bank["pages"][1]["body"]) == ("POST", "amount=5")
    assert (plan["connections"], plan["sessions"].get("https_url")) == (6, None)


def test_https_pages_go_to_the_https_target_or_are_refused(tmp_path: Path) -> None:
    loaded = load(write(tmp_path, BANK.replace("path: /__gauntlet/session, method", "path: /__gauntlet/session, scheme: https, method")))
    plan = loaded.to_plan("https://127.0.0.1:8443/").engine_json()
    assert (plan["sessions"]["https_url"], plan["connections"]) == ("https://127.0.0.1:8443/", 12)
    with pytest.raises(GauntletError, match="has https pages but the target http://127.0.0.1:8080/ is plain http"):
        loaded.to_plan("http://127.0.0.1:8080/")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("{account: 0.5, logout: 0.5}", "{account: 0.5, logout: 0.4}"), "transitions row 'account' sums to 0.9"),
        (("{account: 0.5, logout: 0.5}", "{account: 0.5, leave: 0.5}"), "transitions row 'account' goes to 'leave'"),
        (("      logout: {end: 1}\n", "      logoff: {end: 1}\n"), "transitions row 'logoff' is not a page"),
        (("start: login", "start: home"), "start 'home' is not a page"),
        (("{account: 0.5, logout: 0.5}", "{account: 1.5, logout: -0.5}"), "at most 1, not 1.5"),
        (("method: POST, ", ""), "has a body but is a GET"),
        (("method: POST", "method: PUT"), "'GET' or 'POST'"),
    ],
)
def test_walk_mistakes_name_their_row(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    path = write(tmp_path, BANK.replace(*change))
    with pytest.raises(GauntletError) as raised:
        load(path)
    assert message in raised.value.cause and "\n" not in str(raised.value), raised.value.cause
    assert raised.value.cause.startswith(f"{path}:")


def test_a_walk_keeps_its_cookie_and_a_page_that_fails_its_check_fails_qos(
    tmp_path: Path, builtin_server: ServerInstance
) -> None:
    # A stranger asks for the logged-in page without logging in: its marker never shows.
    stranger = (
        "  - name: stranger\n    pages:\n"
        "      - {name: peek, path: /__gauntlet/session, expect: 'cookie=[gauntlet_user=ann]'}\n"
    )
    loaded = load(write(tmp_path, BANK.replace("users: 3\n", stranger + "users: 4\n")))
    result = run(loaded.to_plan(builtin_server.url).engine_json()).result
    pages = result["sessions"]["pages"]
    for name in ("login", "account", "logout"):
        assert pages[name]["count"] > 10 and pages[name]["fail"] == pages[name]["invalid"] == 0, (name, pages[name])
    assert pages["peek"]["count"] > 5 and pages["peek"]["invalid"] == pages["peek"]["fail"] == pages["peek"]["count"]
    judged = verdict(result["sessions"])
    assert not judged.valid
    assert [(p.name, p.valid, p.invalid) for p in judged.pages if not p.valid] == [("peek", False, pages["peek"]["count"])]
    assert verdict({"pages": {k: v for k, v in pages.items() if k != "peek"}}).valid
