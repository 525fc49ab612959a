//! Unit tests of the colours and numbers: text contrast on every ramp stop,
//! the scale's ends and middle, the legend's swatches, and number spelling.

use crate::colour::{GREENS, RD_BU_BLUE, RD_BU_RED, REDS, Ramp, Rgb, Scale, VIRIDIS, YL_OR_RD};
use crate::legend::{Legend, number, thousands};

/// The text colour of each stop, `w` or `b`, as ColorBrewer's and viridis'
/// references give them for a 4.5:1 contrast.
#[test]
fn text_reads_on_every_stop() {
    let cases: [(Ramp, &str); 6] = [
        (VIRIDIS, "wwwwbbbbb"),
        (YL_OR_RD, "bbbbbbwww"),
        (REDS, "bbbbbbwww"),
        (GREENS, "bbbbbbbww"),
        (RD_BU_RED, "bbbbww"),
        (RD_BU_BLUE, "bbbbww"),
    ];
    for (ramp, expected) in cases {
        let got: String = ramp
            .iter()
            .map(|stop| {
                if stop.text() == Rgb([0, 0, 0]) {
                    'b'
                } else {
                    'w'
                }
            })
            .collect();
        assert_eq!(got, expected, "{ramp:?}");
    }
}

#[test]
fn the_scale_runs_from_zero_to_the_top() {
    let scale = Scale::up_to(VIRIDIS, 8.0);
    assert_eq!(scale.colour(0.0).to_string(), "#440154");
    assert_eq!(scale.colour(4.0).to_string(), "#21918c");
    assert_eq!(scale.colour(8.0).to_string(), "#fde725");
    // Beyond the ends: the end colours, never a panic.
    assert_eq!(scale.colour(-1.0), scale.colour(0.0));
    assert_eq!(scale.colour(80.0), scale.colour(8.0));
    assert_eq!(scale.colour(f64::NAN), scale.colour(0.0));
    // As dask's `max(1, ...)`: an all-zero figure is the first colour.
    let flat = Scale::up_to(REDS, 0.0);
    assert_eq!(flat.top, 1.0);
    assert_eq!(flat.colour(0.0).to_string(), "#fff5f0");
    // Halfway between two stops is their mean.
    let two = Scale::up_to(RD_BU_RED, 5.0);
    assert_eq!(two.colour(0.5).to_string(), "#fae9df");
}

#[test]
fn small_whole_figures_get_one_swatch_each() {
    let labels = |scale: Scale, integral: bool| -> Vec<String> {
        Legend::scale(&scale, integral)
            .into_iter()
            .map(|s| s.label)
            .collect()
    };
    assert_eq!(labels(Scale::up_to(REDS, 3.0), true), ["0", "1", "2", "3"]);
    assert_eq!(
        labels(Scale::up_to(VIRIDIS, 59.0), true),
        ["0", "7", "15", "22", "30", "37", "44", "52", "59"]
    );
    assert_eq!(
        labels(Scale::up_to(REDS, 4.0), false),
        ["0", "0.5", "1", "1.5", "2", "2.5", "3", "3.5", "4"]
    );
    // Each swatch is exactly the colour of a node with its number.
    let scale = Scale::up_to(YL_OR_RD, 5.0);
    for (value, swatch) in Legend::scale(&scale, true).into_iter().enumerate() {
        assert_eq!(swatch.fill, scale.colour(value as f64));
    }
}

#[test]
fn numbers_are_spelled_for_reading() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1_000), "1,000");
    assert_eq!(thousands(100_306), "100,306");
    assert_eq!(thousands(1_234_567), "1,234,567");
    assert_eq!(number(2.25, false), "2.2");
    assert_eq!(number(2.0, false), "2");
    assert_eq!(number(12_345.6, true), "12,346");
    assert_eq!(number(1_999.96, false), "2,000");
    assert_eq!(number(1.999_97, false), "2");
    assert_eq!(number(0.000_1, false), "0");
}
