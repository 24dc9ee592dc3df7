"""Colours for a chart's series: every series of one chart its own colour, however many there are.

Plotly's default cycles ten colours, so an eleventh line repeats the first. The first colours are
Kelly's maximum-contrast set (without white and black, which vanish on the page or read as an
axis); beyond them, hues step by the golden angle at alternating lightness, which never lands on a
colour already given.
"""

from __future__ import annotations

import colorsys

KELLY = (
    "#f3c300", "#875692", "#f38400", "#a1caf1", "#be0032", "#c2b280", "#848482", "#008856", "#e68fac", "#0067a5",
    "#f99379", "#604e97", "#f6a600", "#b3446c", "#dcd300", "#882d17", "#8db600", "#654522", "#e25822", "#2b3d26",
)
GOLDEN_ANGLE = 0.381966
LIGHTNESS = (0.35, 0.55, 0.45)


def colors(count: int) -> list[str]:
    """`count` distinct colours, as #rrggbb."""
    found = list(KELLY[:count])
    for index in range(count - len(found)):
        hue = (index * GOLDEN_ANGLE) % 1.0
        red, green, blue = colorsys.hls_to_rgb(hue, LIGHTNESS[index % len(LIGHTNESS)], 0.75)
        color = f"#{round(red * 255):02x}{round(green * 255):02x}{round(blue * 255):02x}"
        while color in found:  # two golden-angle steps may round to one colour: nudge the blue
            color = f"{color[:5]}{(int(color[5:], 16) + 1) % 256:02x}"
        found.append(color)
    return found
