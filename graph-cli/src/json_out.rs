//! The `--json` outputs: every one is a serde struct, written on one line.
//! `order` and `assign` spell their outer levels with a space after each
//! `,` and `:` (`{"order": [["x", 0], ...], ...}`), as they always have.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};

/// Writes `value` as one line of compact JSON.
pub(crate) fn write_compact(
    out: &mut (impl Write + ?Sized),
    value: &impl Serialize,
) -> anyhow::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// Writes `value` as one line of JSON whose first `levels` levels of arrays
/// and objects have a space after each `,` and `:`; deeper ones are compact.
pub(crate) fn write_spaced(
    out: &mut (impl Write + ?Sized),
    value: &impl Serialize,
    levels: usize,
) -> anyhow::Result<()> {
    let formatter = Spaced { depth: 0, levels };
    let mut serializer = serde_json::Serializer::with_formatter(&mut *out, formatter);
    value.serialize(&mut serializer)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// A compact formatter that puts a space after `,` and `:` on the outer
/// `levels` levels.
struct Spaced {
    depth: usize,
    levels: usize,
}

impl Spaced {
    fn spaced(&self) -> bool {
        self.depth <= self.levels
    }
}

impl Formatter for Spaced {
    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.depth += 1;
        CompactFormatter.begin_array(writer)
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.depth -= 1;
        CompactFormatter.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else if self.spaced() {
            writer.write_all(b", ")
        } else {
            writer.write_all(b",")
        }
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.depth += 1;
        CompactFormatter.begin_object(writer)
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.depth -= 1;
        CompactFormatter.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.begin_array_value(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        if self.spaced() {
            writer.write_all(b": ")
        } else {
            writer.write_all(b":")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outer_levels_are_spaced_inner_ones_compact() {
        #[derive(Serialize)]
        struct Report {
            order: Vec<(Vec<u32>, u32)>,
            strategy: &'static str,
        }
        let report = Report {
            order: vec![(vec![1, 2], 0), (vec![3], 1)],
            strategy: "dask",
        };
        let mut out = Vec::new();
        write_spaced(&mut out, &report, 3).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"order\": [[[1,2], 0], [[3], 1]], \"strategy\": \"dask\"}\n"
        );
    }
}
