"""A setup's identity: `config_sha256` hashes the rendered config with the instance's work directory
and ports as placeholders, so that two starts of the same setup hash equal (docs/results.md) and a
changed setting does not."""

from __future__ import annotations

import pytest

from tests.conftest import Start


@pytest.mark.parametrize("kind", ["nginx", "builtin"])
def test_two_starts_of_one_setup_hash_equal(server: Start, kind: str) -> None:
    first, second = server(kind, workers=2), server(kind, workers=2)
    assert first.port != second.port
    if kind == "nginx":  # its config names its work dir and port: they differ, their hash must not
        assert first.config_text != second.config_text
        assert str(first.workdir) in first.config_text and str(first.port) in first.config_text
    assert first.setup()["config_sha256"] == second.setup()["config_sha256"]
    assert "{workdir}" in first.identity_text() or kind == "builtin"
    other = server(kind, workers=3)
    assert other.setup()["config_sha256"] != first.setup()["config_sha256"], "a changed setting is another setup"
