"""Colours for a chart's series: every series of one chart its own colour, however many there are.

Plotly's default cycles ten colours, so an eleventh line repeats the first. The first colours are
Kelly's maximum-contrast set (without white and black, which vanish on the page or read as an
axis); beyond them, hues step by the golden angle at alternating lightness, which never lands on a
colour already given.
"""

from __future__ import annotations

import colorsys

#: Kelly's colours, the darker and more saturated first (a lone line should not be pale yellow).
KELLY = (
    "#0067a5", "#be0032", "#008856", "#f38400", "#875692", "#882d17", "#e68fac", "#848482", "#8db600", "#604e97",
    "#f6a600", "#b3446c", "#a1caf1", "#c2b280", "#dcd300", "#654522", "#e25822", "#2b3d26", "#f99379", "#f3c300",
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
