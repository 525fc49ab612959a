//! A picture never has more boxes than `Options::max_boxes`: more tasks, or
//! more groups when collapsed, are refused with an error naming the graph,
//! the count and the limit.

use graph_core::generate;
use graph_viz::{Error, Options, picture};

#[test]
fn too_many_tasks_are_refused() {
    let graph = generate::chain(21);
    let mut options = Options::default();
    options.max_boxes = 20;
    let err = picture(&graph, "the chain", &options).unwrap_err();
    assert!(
        matches!(&err, Error::TooManyTasks { name, count: 21, limit: 20 } if name == "the chain"),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("the chain has 21 tasks, more than the limit of 20 boxes"),
        "{err}"
    );
    options.max_boxes = 21;
    assert_eq!(
        picture(&graph, "the chain", &options).unwrap().node_count(),
        21
    );
}

#[test]
fn collapsed_pictures_count_groups_not_tasks() {
    // 40 tasks in two groups of key names, `leaf` and `sum`.
    let graph = generate::tree(20, 2);
    let mut options = Options::default();
    options.collapse = true;
    options.max_boxes = 2;
    let drawn = picture(&graph, "the tree", &options).unwrap();
    assert_eq!(drawn.node_count(), 2);
    assert!(drawn.title().contains("in 2 groups"), "{}", drawn.title());
    options.max_boxes = 1;
    let err = picture(&graph, "the tree", &options).unwrap_err();
    assert!(
        matches!(&err, Error::TooManyGroups { name, count: 2, limit: 1 } if name == "the tree"),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("the tree has 2 groups of tasks, more than the limit of 1 boxes"),
        "{err}"
    );
}
