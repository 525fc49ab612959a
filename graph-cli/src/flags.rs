//! Value parsers for the numeric flags: a number that is not finite, or out
//! of the range a flag can use, is a usage error (exit status 2) that names
//! the flag, before anything runs.

/// A finite number, at least 0.
pub(crate) fn non_negative(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(format!("{text:?}: give a finite number, at least 0"))
    }
}

/// A whole number in `min..=max`.
fn count(text: &str, min: u64, max: u64) -> Result<u64, String> {
    let value: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a whole number from {min} to {max}"))?;
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value} is out of range: give {min} to {max}"))
    }
}

/// `taskgraph generate --tasks`: 1 to 100 million.
pub(crate) fn tasks(text: &str) -> Result<usize, String> {
    count(text, 1, 100_000_000).map(|n| n as usize)
}

/// `taskgraph assign --workers`: 1 to a million.
pub(crate) fn workers(text: &str) -> Result<usize, String> {
    count(text, 1, 1_000_000).map(|n| n as usize)
}

/// `taskgraph rewrite --max-steps`: 1 to 10 million.
pub(crate) fn steps(text: &str) -> Result<usize, String> {
    count(text, 1, 10_000_000).map(|n| n as usize)
}

/// `taskgraph generate --value-bytes`: a size (see [`crate::run::parse_size`])
/// of at most 1 TiB.
pub(crate) fn value_bytes(text: &str) -> Result<u64, String> {
    let bytes = crate::run::parse_size(text)?;
    if bytes > 1 << 40 {
        return Err(format!("{text:?}: at most 1 TiB a value"));
    }
    Ok(bytes)
}

/// `--strategy`: the name of a [`Strategy`](graph_order::Strategy), its
/// possible values listed in the help.
pub(crate) fn strategy() -> impl clap::builder::TypedValueParser<Value = graph_order::Strategy> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(
        graph_order::Strategy::ALL.map(graph_order::Strategy::name),
    )
    .try_map(|name| name.parse::<graph_order::Strategy>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_out_of_range_are_refused() {
        for bad in ["NaN", "inf", "-1", "-inf", "1e400", "x", ""] {
            assert!(non_negative(bad).is_err(), "{bad}");
        }
        assert_eq!(non_negative("1.5"), Ok(1.5));
        for bad in ["0", "100000001", "18446744073709551615", "-3", "1.5"] {
            assert!(tasks(bad).is_err(), "{bad}");
        }
        assert_eq!(workers("16"), Ok(16));
        assert!(value_bytes("2TiB").is_err());
    }
}
