//! Reading and writing `taskgraph-json/1`.

use divan::counter::{BytesCount, ItemsCount};
use divan::{AllocProfiler, Bencher, black_box};
use graph_core::{generate, json};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];

fn main() {
    divan::main();
}

/// Parses the text and checks the whole graph (references and cycles).
#[divan::bench(args = SIZES, sample_count = 5)]
fn read(bencher: Bencher<'_, '_>, n: usize) {
    let text = json::to_string(&generate::random_dag(n, 42)).unwrap();
    bencher
        .counter(ItemsCount::new(n))
        .counter(BytesCount::of_slice(text.as_bytes()))
        .bench(|| {
            let graph = json::from_slice(black_box(text.as_bytes())).unwrap();
            assert_eq!(graph.len(), n);
            graph
        });
}

/// Reads a file into a [`graph_core::Shape`] (keys and topology, not the
/// bodies), plain and gzip: what `taskgraph stats` and `order` do.
#[divan::bench(args = SIZES, consts = [false, true], sample_count = 5)]
fn read_shape_file<const GZIP: bool>(bencher: Bencher<'_, '_>, n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join(if GZIP { "graph.json.gz" } else { "graph.json" });
    json::write_path(&generate::random_dag(n, 42), &path).unwrap();
    bencher.counter(ItemsCount::new(n)).bench(|| {
        let shape = json::read_shape_path(black_box(&path)).unwrap();
        assert_eq!(shape.len(), n);
        shape
    });
}

#[divan::bench(args = SIZES, sample_count = 5)]
fn write(bencher: Bencher<'_, '_>, n: usize) {
    let graph = generate::random_dag(n, 42);
    bencher.counter(ItemsCount::new(n)).bench(|| {
        let mut out = Vec::new();
        json::write(black_box(&graph), &mut out).unwrap();
        out
    });
}
