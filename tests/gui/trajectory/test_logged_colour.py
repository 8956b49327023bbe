"""The logged curve's colour stands apart from every variable's: with amber logged beside the second
variable's orange (CIE76 distance 31), the loss and that variable looked like one curve."""
import math

from checkpoint_inspector.gui.trajectory import logged_curves, plotted_runs, run_curves


def _lab(colour: str) -> tuple[float, float, float]:
    """sRGB `#rrggbb` to CIE L*a*b* (D65), the space where distance approximates what an eye tells apart."""
    def linear(c):
        return ((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92

    r, g, b = (linear(int(colour[i:i + 2], 16) / 255) for i in (1, 3, 5))
    x, y, z = ((r * 0.4124 + g * 0.3576 + b * 0.1805) / 0.95047, r * 0.2126 + g * 0.7152 + b * 0.0722,
               (r * 0.0193 + g * 0.1192 + b * 0.9505) / 1.08883)
    f = lambda t: t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116  # noqa: E731
    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def test_the_logged_colour_is_far_from_every_variable_colour():
    colours = run_curves._COLOURS + plotted_runs.RUN_COLOURS
    nearest = min(math.dist(_lab(logged_curves.LOGGED_COLOUR), _lab(c)) for c in colours)
    assert nearest >= 40, nearest  # "just noticeable" is ~2.3; 40 is a different colour, not a shade
