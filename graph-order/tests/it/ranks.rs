//! `ranks_by_str` ranks keys as sorting their `str(key)` texts does, whatever
//! the keys: names that are prefixes of one another, quotes, numbers, nested
//! tuples, tuples not named by a string, plain strings that look like tuples.

use graph_core::Key;
use graph_core::generate::Rng;
use graph_order::ranks_by_str;

/// The ranks by sorting the texts themselves (stable: ties by position).
fn by_sorting_texts(keys: &[Key]) -> Vec<u32> {
    let mut by: Vec<usize> = (0..keys.len()).collect();
    by.sort_by_key(|&i| keys[i].python_str());
    let mut rank = vec![0; keys.len()];
    for (r, i) in by.into_iter().enumerate() {
        rank[i] = r as u32;
    }
    rank
}

fn random_key(rng: &mut Rng, depth: u32) -> Key {
    const NAMES: [&str; 9] = ["a", "a'", "ab", "", "a\"b", "é", "('a'", "a,", "x-1"];
    match rng.below(if depth == 0 { 4 } else { 6 }) {
        0 => Key::from(NAMES[rng.below(NAMES.len())]),
        1 => Key::Int(rng.below(30) as i64 - 10),
        2 => Key::Float(rng.below(9) as f64 / 4.0 - 1.0),
        3 => Key::from(format!("({}", rng.below(3)).as_str()),
        4 => Key::tuple(
            std::iter::once(Key::from(NAMES[rng.below(NAMES.len())]))
                .chain((0..rng.below(4)).map(|_| random_key(rng, depth - 1))),
        ),
        _ => Key::tuple((0..rng.below(4)).map(|_| random_key(rng, depth - 1))),
    }
}

#[test]
fn ranks_are_those_of_the_sorted_texts() {
    for seed in 0..200 {
        let mut rng = Rng::new(seed);
        let keys: Vec<Key> = (0..rng.below(60) + 1)
            .map(|_| random_key(&mut rng, 3))
            .collect();
        assert_eq!(
            ranks_by_str(&keys),
            by_sorting_texts(&keys),
            "seed {seed}: {keys:?}"
        );
    }
}

#[test]
fn a_graphs_keys_rank_by_text_not_by_number() {
    let keys: Vec<Key> = [10, 2, 1]
        .into_iter()
        .map(|i| Key::from(("x", i)))
        .chain([Key::from(("x",)), Key::from("x"), Key::from(("w", 5))])
        .collect();
    // "('w', 5)" < "('x', 1)" < "('x', 10)" < "('x', 2)" < "('x',)" < "x"
    assert_eq!(ranks_by_str(&keys), [2, 3, 1, 4, 5, 0]);
}
