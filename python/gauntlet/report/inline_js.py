"""plotly.js inlined in a page, so that it draws with no network (the HTML report, the live page);
a module of its own so the live page takes it without the report's views."""

from __future__ import annotations

from markupsafe import Markup


def plotly_js() -> str:
    """plotly.js as the plotly package ships it (minified, about 4.8 MB)."""
    from plotly.offline import get_plotlyjs  # type: ignore[import-untyped]

    return str(get_plotlyjs())


def plotly_script() -> Markup:
    """plotly.js ready for the inside of a <script> element (a `</script` in it escaped)."""
    return Markup(plotly_js().replace("</script", "<\\/script"))
