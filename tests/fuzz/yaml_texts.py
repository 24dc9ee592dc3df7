"""Hypothesis strategies for YAML texts a user might write, or break: random structures, the shipped
files mutated with tags, aliases, odd scalars and raw bytes, and arbitrary bytes."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import strategies as st

from gauntlet.model.loadfile import LOADS
from gauntlet.suite.load import SHIPPED

SHIPPED_FILES = {path.name: path.read_bytes() for directory in (LOADS, SHIPPED) for path in sorted(directory.glob("*.yaml"))}
#: The models' field names, so random mappings reach their validators.
FIELDS = sorted(
    {word for text in SHIPPED_FILES.values() for word in yaml.safe_load(text.decode()) or ()}
    | {"sessions", "pages", "embedded", "think", "uniform", "exponential", "phases", "users_per_s", "duration"}
    | {"groups", "servers", "quick", "defaults", "workload", "connections", "requests", "rate_per_s", "from", "to"}
    | {"step", "model", "load", "load_overrides", "users", "capacity", "kind", "workers", "measure", "seed", "qos"}
)
ODD_SCALARS = [
    "!foo 3", "!!python/object:os.system 1", "!!binary aGVsbG8=", "!!timestamp 2026-13-45", "!!int x", "!!float .x",
    "&a [*a]", "*nowhere", "&b {x: *b}", ".nan", ".inf", "-.inf", "1e400", "1.0e+400", "-1", "0", "0x1F", "0o17",
    "1_000", "99999999999999999999999999999999", "-99999999999999999999", "1e300s", "0s", "5", "5x", "~", "null",
    "yes", "no", "on", "2026-11-24", "12:30:00", "'\\x01'", '"\\x00"', '"\\ud800"', "''", "[]", "{}", "[[[[[[[]]]]]]]",
    "? [a]\n: b", "!!set {a, b}", "!!omap [{a: 1}]", "<<: *a", "|\n  block", ">-\n  folded", "\"multi\nline\"",
]
ODD_BYTES = [b"\x00", b"\x01", b"\x7f", b"\xff", b"\xc3", b"\xe9", b"\xef\xbb\xbf", b"\t", b"\r", b"\r\n", b"\xc2\x85", "\u2028".encode()]
FRAGMENTS = [s.encode() for s in ODD_SCALARS] + ODD_BYTES + [b": ", b"- ", b"\n", b"  ", b"{", b"}", b"[", b"]", b",", b"---\n", b"%YAML 1.1\n---\n", b"#", b"&x ", b"*x", b"!x ", b"? "]

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["1s", "500ms", "30m", "1h", "0s", "5", "ST-1", "/webtest.html", "builtin", "nginx", "rate", "sessions"])
)
#: A value as YAML writes it in flow style: any scalar, list or mapping, on one line.
odd_values = scalars.map(lambda value: yaml.safe_dump(value, default_flow_style=True, width=10**6).removesuffix("\n...\n").strip().encode())
keys = st.sampled_from(FIELDS) | st.text(max_size=8)
structures = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5), max_leaves=25
)


@st.composite
def dumped_structures(draw: st.DrawFn) -> bytes:
    """A random mapping written as YAML, sometimes with a shipped file's fields."""
    data = draw(st.dictionaries(keys, structures, max_size=6))
    if draw(st.booleans()):
        base = yaml.safe_load(draw(st.sampled_from(sorted(SHIPPED_FILES.values()))).decode())
        data = {**base, **data}
    return yaml.safe_dump(data, allow_unicode=draw(st.booleans())).encode()


#: Whole lines that YAML accepts and the loaders must refuse or ignore.
ODD_LINES = [
    b"? [a]\n: b", b"? {a: 1}\n: b", b"[1, 2]: 3", b"{a: 1}: 2", b"x: &a [*a]", b"x: &b {y: *b}", b"<<: {a: 1}",
    b"!foo x: 1", b"!!python/name:os.system x: 1", b"x: !!set {a, b}", b"x: !!omap [{a: 1}]", b"x: !!pairs [{a: 1}]",
    b"x: !!binary aGVsbG8=", b"'a\nb': 1", b'"\\x00": 1', b"x: &c 1\ny: *c", b"---", b"...", b"%YAML 1.1\n---",
]


def _line_start(text: bytearray, at: int) -> int:
    return text.rfind(b"\n", 0, at) + 1


@st.composite
def mutated_shipped(draw: st.DrawFn) -> bytes:
    """A shipped file with values replaced by odd ones, odd lines added, or bytes deleted, repeated
    or replaced."""
    text = bytearray(draw(st.sampled_from(sorted(SHIPPED_FILES.values()))))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        end = draw(st.integers(at, min(len(text), at + 40)))
        action = draw(st.sampled_from(["value", "value", "line", "line", "bytes", "delete", "repeat"]))
        if action == "value":
            colon = text.find(b": ", at)
            if colon >= 0:
                line_end = text.find(b"\n", colon)
                line_end = len(text) if line_end < 0 else line_end
                text[colon + 2 : line_end] = draw(st.sampled_from(FRAGMENTS) | odd_values)
        elif action == "line":
            start = _line_start(text, at)
            indent = len(text[start:]) - len(text[start:].lstrip(b" -"))
            line = draw(st.sampled_from(ODD_LINES) | st.tuples(keys, odd_values).map(lambda kv: kv[0].encode() + b": " + kv[1]))
            text[start:start] = b" " * indent + line + b"\n"
        elif action == "bytes":
            text[at:end] = draw(st.sampled_from(FRAGMENTS) | st.binary(max_size=8))
        elif action == "delete":
            del text[at:end]
        else:
            text[end:end] = text[at:end]
    return bytes(text)


yaml_texts = dumped_structures() | mutated_shipped() | st.binary(max_size=200)


def write(directory: Path, name: str, text: bytes) -> Path:
    path = directory / name
    path.write_bytes(text)
    return path
