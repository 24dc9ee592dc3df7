"""The live page: one HTML file with plotly.js inlined as the report has it (report.inline_js),
so it draws with no network; its script asks `/state` every second for what is new and redraws."""

from __future__ import annotations

import jinja2

from gauntlet.report.inline_js import plotly_script
from gauntlet.report.palette import colors

#: Distinct colours for the roles and error kinds a chart may show.
SERIES_COLORS = 20

TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("gauntlet.live", "templates"), autoescape=True, undefined=jinja2.StrictUndefined,
)


def render_page() -> bytes:
    return TEMPLATES.get_template("live.html.j2").render(
        plotly_js=plotly_script(), colors=colors(SERIES_COLORS),
    ).encode()
