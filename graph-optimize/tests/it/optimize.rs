//! `optimize`: dask's optimization-docs story on the word-count graph, one
//! pass at a time and as a pipeline, and the pipeline's report.

use crate::common::{Evaluator, keys, show_checked};
use expect_test::expect;
use graph_core::Op;
use graph_core::generate::{chain, word_count};
use graph_optimize::{
    Error, FuseConfig, OptimizeConfig, Pass, cull, fuse, inline, inline_functions, optimize,
};

#[test]
fn the_word_count_story_one_pass_at_a_time() {
    let graph = word_count();
    let outputs = keys(&["print1", "print2"]);
    let culled = cull(&graph, &outputs).unwrap();
    expect![[r#"
        count1 = count(words, val1)
        count2 = count(words, val2)
        format1 = format('word list has {} occurrences of {}, out of {} words', count1, val1, nwords)
        format2 = format('word list has {} occurrences of {}, out of {} words', count2, val2, nwords)
        nwords = len(split(words))
        print1 = identity(format1)
        print2 = identity(format2)
        val1 = 'orange'
        val2 = 'apple'
        words = 'apple orange apple pear orange pear pear'
    "#]].assert_eq(&show_checked(&culled));
    let inlined = inline(&culled, &[], true).unwrap();
    expect![[r#"
        count1 = count('apple orange apple pear orange pear pear', 'orange')
        count2 = count('apple orange apple pear orange pear pear', 'apple')
        format1 = format('word list has {} occurrences of {}, out of {} words', count1, 'orange', nwords)
        format2 = format('word list has {} occurrences of {}, out of {} words', count2, 'apple', nwords)
        nwords = len(split('apple orange apple pear orange pear pear'))
        print1 = identity(format1)
        print2 = identity(format2)
        val1 = 'orange'
        val2 = 'apple'
        words = 'apple orange apple pear orange pear pear'
    "#]].assert_eq(&show_checked(&inlined));
    let fast = [Op::new("len"), Op::new("split")];
    let cheap = inline_functions(&inlined, &outputs, &fast).unwrap();
    expect![[r#"
        count1 = count('apple orange apple pear orange pear pear', 'orange')
        count2 = count('apple orange apple pear orange pear pear', 'apple')
        format1 = format('word list has {} occurrences of {}, out of {} words', count1, 'orange', len(split('apple orange apple pear orange pear pear')))
        format2 = format('word list has {} occurrences of {}, out of {} words', count2, 'apple', len(split('apple orange apple pear orange pear pear')))
        print1 = identity(format1)
        print2 = identity(format2)
        val1 = 'orange'
        val2 = 'apple'
        words = 'apple orange apple pear orange pear pear'
    "#]].assert_eq(&show_checked(&cheap));
    let fused = fuse(&cheap, &FuseConfig::default()).unwrap();
    expect![[r#"
        count1-format1-print1 = identity(format('word list has {} occurrences of {}, out of {} words', count('apple orange apple pear orange pear pear', 'orange'), 'orange', len(split('apple orange apple pear orange pear pear'))))
        count2-format2-print2 = identity(format('word list has {} occurrences of {}, out of {} words', count('apple orange apple pear orange pear pear', 'apple'), 'apple', len(split('apple orange apple pear orange pear pear'))))
        print1 = count1-format1-print1
        print2 = count2-format2-print2
        val1 = 'orange'
        val2 = 'apple'
        words = 'apple orange apple pear orange pear pear'
    "#]].assert_eq(&show_checked(&fused));
    let (before, after) = (Evaluator::new(&graph), Evaluator::new(&fused));
    for key in &outputs {
        assert_eq!(before.get(key), after.get(key));
    }
}

#[test]
fn the_word_count_story_as_a_pipeline() {
    let graph = word_count();
    let config = OptimizeConfig {
        keys: Some(keys(&["print1", "print2"])),
        fast_ops: vec![Op::new("len"), Op::new("split")],
        fuse: FuseConfig {
            drop_aliases: true,
            ..FuseConfig::default()
        },
        ..OptimizeConfig::default()
    };
    let (optimized, report) = optimize(&graph, &config).unwrap();
    expect![[r#"
        count1-format1-print1 = identity(format('word list has {} occurrences of {}, out of {} words', count('apple orange apple pear orange pear pear', 'orange'), 'orange', len(split('apple orange apple pear orange pear pear'))))
        count2-format2-print2 = identity(format('word list has {} occurrences of {}, out of {} words', count('apple orange apple pear orange pear pear', 'apple'), 'apple', len(split('apple orange apple pear orange pear pear'))))
        print1 = count1-format1-print1
        print2 = count2-format2-print2
        val1 = 'orange'
        val2 = 'apple'
        words = 'apple orange apple pear orange pear pear'
    "#]].assert_eq(&show_checked(&optimized));
    let counts: Vec<(Pass, usize, usize)> = report
        .passes
        .iter()
        .map(|p| (p.pass, p.tasks_before, p.tasks_after))
        .collect();
    expect!["[(Cull, 14, 10), (Inline, 10, 10), (InlineFunctions, 10, 9), (Fuse, 9, 7)]"]
        .assert_eq(&format!("{counts:?}"));
    assert_eq!(
        (report.tasks_before, report.tasks_after),
        (14, optimized.len())
    );
    let line = report.passes[0].to_string();
    assert!(
        line.starts_with("cull") && line.contains("14 -> 10"),
        "{line}"
    );
}

#[test]
fn default_keys_are_the_leaves() {
    let graph = chain(10);
    let (optimized, _) = optimize(&graph, &OptimizeConfig::default()).unwrap();
    expect![[r#"
        ('chain', 0) = 0
        ('chain', 9) = inc(inc(inc(inc(inc(inc(inc(inc(inc(0)))))))))
    "#]]
    .assert_eq(&show_checked(&optimized));
}

#[test]
fn passes_have_names() {
    for pass in [
        Pass::Cull,
        Pass::Inline,
        Pass::InlineFunctions,
        Pass::FuseLinear,
        Pass::Fuse,
    ] {
        assert_eq!(Pass::from_name(pass.name()), Some(pass));
    }
    assert_eq!(Pass::from_name("nope"), None);
}

#[test]
fn unknown_requested_keys_are_errors() {
    let config = OptimizeConfig {
        keys: Some(keys(&["nope"])),
        ..OptimizeConfig::default()
    };
    let err = optimize(&word_count(), &config).unwrap_err();
    assert!(matches!(err, Error::UnknownKey { .. }));
    assert_eq!(err.to_string(), "unknown key 'nope': no task has it");
}
