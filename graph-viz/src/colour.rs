//! Colour ramps (viridis, ColorBrewer), the scale that maps a figure to a
//! fill, the text colour that reads on each fill, and the worker palette.

use std::fmt;

/// An sRGB colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rgb(pub(crate) [u8; 3]);

impl Rgb {
    /// Parses `#RRGGBB` (a constant of this module).
    const fn hex(text: &str) -> Rgb {
        /// The value of one hexadecimal digit.
        const fn digit(c: u8) -> u8 {
            match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                _ => panic!("not a hexadecimal digit"),
            }
        }
        let b = text.as_bytes();
        assert!(b.len() == 7 && b[0] == b'#', "colours are #RRGGBB");
        Rgb([
            digit(b[1]) * 16 + digit(b[2]),
            digit(b[3]) * 16 + digit(b[4]),
            digit(b[5]) * 16 + digit(b[6]),
        ])
    }

    /// White, the fill of an uncoloured task.
    pub(crate) const WHITE: Rgb = Rgb([255, 255, 255]);

    /// WCAG 2 relative luminance.
    fn luminance(self) -> f64 {
        let linear = |c: u8| {
            let c = f64::from(c) / 255.0;
            if c <= 0.039_28 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        let [r, g, b] = self.0;
        0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
    }

    /// Black or white, whichever contrasts more with this fill (WCAG 2
    /// contrast ratio), for the text drawn on it.
    pub(crate) fn text(self) -> Rgb {
        let l = self.luminance();
        let on_black = (l + 0.05) / 0.05;
        let on_white = 1.05 / (l + 0.05);
        if on_black >= on_white {
            Rgb([0, 0, 0])
        } else {
            Rgb([255, 255, 255])
        }
    }

    /// The colour `t` of the way from `self` to `other`.
    fn mix(self, other: Rgb, t: f64) -> Rgb {
        let channel = |i: usize| {
            (f64::from(self.0[i]) + (f64::from(other.0[i]) - f64::from(self.0[i])) * t)
                .round()
                .clamp(0.0, 255.0) as u8
        };
        Rgb([channel(0), channel(1), channel(2)])
    }
}

impl fmt::Display for Rgb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [r, g, b] = self.0;
        write!(f, "#{r:02x}{g:02x}{b:02x}")
    }
}

/// A colour ramp: stops spaced evenly from the value 0 to the scale's top.
pub(crate) type Ramp = &'static [Rgb];

/// A [`Ramp`] from `#RRGGBB` literals, checked when compiled.
macro_rules! ramp {
    ($($hex:literal)*) => { &[$(Rgb::hex($hex)),*] };
}

/// viridis sampled at i/8: perceptually uniform, colour-blind safe, and it
/// prints in grey. For order positions: dark purple first, yellow last.
pub(crate) const VIRIDIS: Ramp = ramp!(
    "#440154" "#472D7B" "#3B528B" "#2C728E" "#21918C" "#28AE80" "#5EC962" "#ADDC30" "#FDE725"
);
/// ColorBrewer YlOrRd: for ages, where 0 is harmless and long is costly.
pub(crate) const YL_OR_RD: Ramp = ramp!(
    "#FFFFCC" "#FFEDA0" "#FED976" "#FEB24C" "#FD8D3C" "#FC4E2A" "#E31A1C" "#BD0026" "#800026"
);
/// ColorBrewer Reds: for memory pressure, higher is worse (dask's tests
/// draw pressure with `Reds` too).
pub(crate) const REDS: Ramp = ramp!(
    "#FFF5F0" "#FEE0D2" "#FCBBA1" "#FC9272" "#FB6A4A" "#EF3B2C" "#CB181D" "#A50F15" "#67000D"
);
/// ColorBrewer Greens: for inputs freed, higher is good.
pub(crate) const GREENS: Ramp = ramp!(
    "#F7FCF5" "#E5F5E0" "#C7E9C0" "#A1D99B" "#74C476" "#41AB5D" "#238B45" "#006D2C" "#00441B"
);
/// The red half of ColorBrewer RdBu, from its neutral middle: memory
/// increases.
pub(crate) const RD_BU_RED: Ramp =
    ramp!("#F7F7F7" "#FDDBC7" "#F4A582" "#D6604D" "#B2182B" "#67001F");
/// The blue half of ColorBrewer RdBu, from its neutral middle: memory
/// decreases, so that the two read as the sides of one signed figure.
pub(crate) const RD_BU_BLUE: Ramp =
    ramp!("#F7F7F7" "#D1E5F0" "#92C5DE" "#4393C3" "#2166AC" "#053061");

/// Maps a figure to a fill: `ramp` interpolated linearly in sRGB at
/// `value / top`, anchored at 0 as dask anchors its colour maps.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scale {
    /// The ramp.
    pub(crate) ramp: Ramp,
    /// The value drawn in the ramp's last colour (at least 1).
    pub(crate) top: f64,
}

impl Scale {
    /// A scale from 0 to the largest of `values` (at least 1, as in dask's
    /// `max(1, *values)`).
    pub(crate) fn up_to(ramp: Ramp, max: f64) -> Scale {
        Scale {
            ramp,
            top: if max.is_finite() { max.max(1.0) } else { 1.0 },
        }
    }

    /// The fill of `value`; values outside 0..=top take the end colours.
    pub(crate) fn colour(&self, value: f64) -> Rgb {
        let at = if value.is_finite() {
            (value / self.top).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let steps = (self.ramp.len() - 1) as f64;
        let position = at * steps;
        let low = (position.floor() as usize).min(self.ramp.len() - 2);
        self.ramp[low].mix(self.ramp[low + 1], position - low as f64)
    }
}

/// Ten well-separated hues (matplotlib's `tab10`), one per category (a
/// worker, a stage); later categories reuse them lighter.
pub(crate) fn category_colour(worker: u32) -> Rgb {
    /// matplotlib's `tab10`.
    const TAB10: Ramp = ramp!(
        "#1F77B4" "#FF7F0E" "#2CA02C" "#D62728" "#9467BD" "#8C564B" "#E377C2" "#7F7F7F" "#BCBD22" "#17BECF"
    );
    let base = TAB10[worker as usize % TAB10.len()];
    let turn = worker as usize / TAB10.len();
    // Each later turn blends further towards white, so that colours differ.
    let blend = 1.0 - 0.6_f64.powi(turn.min(16) as i32);
    base.mix(Rgb::WHITE, blend)
}
