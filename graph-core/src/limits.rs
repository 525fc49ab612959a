//! The limits of what a graph may hold: how deep its terms and keys nest
//! and how long its strings are. Graphs built in code are held to the
//! nesting limit as files are; the reader holds files to all of them
//! (`graph_core::json` re-exports them).

/// How deep terms and keys may nest, counting each term object (`ref`,
/// `call`, `list`) and each key array as a level. The reader takes any
/// depth (it grows its own stack), and terms are walked, written, compared
/// and dropped without recursion; keys are compared, hashed, shown and
/// dropped by recursion, and this many levels is what those hold on a
/// thread's default 2 MiB stack in an optimized build. The optimizer's
/// output nests far less by default (see graph-optimize's
/// `DEFAULT_MAX_DEPTH`).
pub const MAX_NESTING: usize = 8_192;

/// The most bytes of a string in a key, of an op name and of a field name
/// (64 KiB): longer ones are an error naming the line and task, given as
/// soon as the reader is that far into the string, so a hostile file never
/// makes it hold more.
pub const MAX_NAME_BYTES: usize = 64 * 1024;

/// The most bytes of a string literal in a term (256 MiB): longer ones are
/// an error naming the line and task, given before more of the string is
/// held. Larger values are computed at run time, not written into graphs.
pub const MAX_STRING_BYTES: usize = 256 * 1024 * 1024;
