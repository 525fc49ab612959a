//! Every graph of dask's tests, by every strategy: a valid order, `Auto` no
//! worse than `Dask`, and the lower bound no higher than `Auto`. Run with
//! `--nocapture` for the table of max pressures.

use crate::common::{Case, STRATEGIES};
use graph_order::Strategy;

const GRAPHS: &[(&str, &str)] = &[
    ("02_0", include_str!("../data/dask/02_0.txt")),
    ("02_1", include_str!("../data/dask/02_1.txt")),
    ("03_0", include_str!("../data/dask/03_0.txt")),
    ("04_0", include_str!("../data/dask/04_0.txt")),
    ("05_0", include_str!("../data/dask/05_0.txt")),
    ("06_0", include_str!("../data/dask/06_0.txt")),
    ("07_0", include_str!("../data/dask/07_0.txt")),
    ("08_0", include_str!("../data/dask/08_0.txt")),
    ("10_0", include_str!("../data/dask/10_0.txt")),
    ("11_0", include_str!("../data/dask/11_0.txt")),
    ("13_0", include_str!("../data/dask/13_0.txt")),
    ("14_0", include_str!("../data/dask/14_0.txt")),
    ("15_0", include_str!("../data/dask/15_0.txt")),
    ("16_0", include_str!("../data/dask/16_0.txt")),
    ("17_0", include_str!("../data/dask/17_0.txt")),
    ("18_0", include_str!("../data/dask/18_0.txt")),
    ("19_0", include_str!("../data/dask/19_0.txt")),
    ("20_0", include_str!("../data/dask/20_0.txt")),
    ("21_0", include_str!("../data/dask/21_0.txt")),
    ("22_0", include_str!("../data/dask/22_0.txt")),
    ("23_0", include_str!("../data/dask/23_0.txt")),
    ("24_0", include_str!("../data/dask/24_0.txt")),
    ("25_0", include_str!("../data/dask/25_0.txt")),
    ("29_0", include_str!("../data/dask/29_0.txt")),
    ("31_0", include_str!("../data/dask/31_0.txt")),
    ("32_0", include_str!("../data/dask/32_0.txt")),
    ("33_0", include_str!("../data/dask/33_0.txt")),
    ("36_0", include_str!("../data/dask/36_0.txt")),
    ("37_0", include_str!("../data/dask/37_0.txt")),
    ("37_1", include_str!("../data/dask/37_1.txt")),
    ("38_0", include_str!("../data/dask/38_0.txt")),
    ("40_0", include_str!("../data/dask/40_0.txt")),
    ("42_0", include_str!("../data/dask/42_0.txt")),
    ("43_0", include_str!("../data/dask/43_0.txt")),
    ("44_0", include_str!("../data/dask/44_0.txt")),
    ("45_0", include_str!("../data/dask/45_0.txt")),
    ("47_0", include_str!("../data/dask/47_0.txt")),
    ("48_0", include_str!("../data/dask/48_0.txt")),
    ("49_0", include_str!("../data/dask/49_0.txt")),
    ("51_0", include_str!("../data/dask/51_0.txt")),
    ("52_0", include_str!("../data/dask/52_0.txt")),
    ("53_0", include_str!("../data/dask/53_0.txt")),
];

#[test]
fn auto_never_above_dask_on_dask_graphs() {
    let mut improved = 0;
    for &(name, text) in GRAPHS {
        let case = Case::parse(text);
        for strategy in STRATEGIES {
            // `Case::order` checks that the order is valid.
            case.order(strategy);
        }
        let dask = case.order(Strategy::Dask).max_pressure();
        let auto = case.order(Strategy::Auto).max_pressure();
        let bound = case.lower_bound();
        assert!(auto <= dask, "{name}: auto {auto} > dask {dask}");
        assert!(bound <= auto, "{name}: bound {bound} > auto {auto}");
        improved += usize::from(auto < dask);
        println!(
            "{name:>6}  tasks {:>4}  dask {dask:>3}  auto {auto:>3}  bound {bound:>3}",
            case.graph.len()
        );
    }
    println!("auto below dask on {improved} of {} graphs", GRAPHS.len());
}
