//! The README's Rust examples, compiled and run as doctests of this library,
//! which sits above every crate of the workspace.

/// The README's examples.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeExamples;
