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

/// A whole number in `low..=high`, `what` naming it in the error.
fn count(text: &str, low: usize, high: usize, what: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (low..=high).contains(&n) => Ok(n),
        _ => Err(format!("give {what} from {low} to {high}")),
    }
}

/// `taskgraph generate --tasks`: 1 to 100 million.
pub(crate) fn tasks(text: &str) -> Result<usize, String> {
    count(text, 1, 100_000_000, "a number of tasks")
}

/// `taskgraph assign --workers`: 1 to a million.
pub(crate) fn workers(text: &str) -> Result<usize, String> {
    count(text, 1, 1_000_000, "a number of workers")
}

/// `taskgraph rewrite --max-steps`: 1 to 10 million.
pub(crate) fn steps(text: &str) -> Result<usize, String> {
    count(text, 1, 10_000_000, "a number of steps")
}

/// The most processes a run may have, and worker threads per process.
pub(crate) const MAX_PROCESSES: usize = graph_distributed::MAX_PROCESSES;
pub(crate) const MAX_THREADS: usize = 256;

/// `taskgraph run --threads`: 0 (one per core) to 256.
pub(crate) fn threads(text: &str) -> Result<usize, String> {
    count(
        text,
        0,
        MAX_THREADS,
        "a number of threads (0: one per core)",
    )
}

/// `taskgraph run --processes`: 1 to 256.
pub(crate) fn processes(text: &str) -> Result<usize, String> {
    count(text, 1, MAX_PROCESSES, "a number of processes")
}

/// `taskgraph run --retries`: 0 to 255 losses survived.
pub(crate) fn retries(text: &str) -> Result<usize, String> {
    count(
        text,
        0,
        MAX_PROCESSES - 1,
        "a number of lost processes to survive",
    )
}

/// `taskgraph run --process`: an index below 256.
pub(crate) fn process(text: &str) -> Result<usize, String> {
    count(text, 0, MAX_PROCESSES - 1, "a process index")
}

/// A number of seconds: finite, more than 0, at most a day.
pub(crate) fn seconds(text: &str) -> Result<f64, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| "give a number of seconds".to_string())?;
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0) {
        return Err("give a number of seconds more than 0 and at most 86400 (a day)".to_string());
    }
    Ok(seconds)
}

/// A size in bytes: a number, and optionally a unit (KB, MB, GB, KiB, MiB,
/// GiB; any case; a space before it allowed).
pub(crate) fn size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?}: write bytes, or KB, MB, GB, KiB, MiB, GiB"
            ));
        }
    };
    let not_a_size = || {
        format!("{text:?} is not a size: write bytes, or a number with KB, MB, GB, KiB, MiB, GiB")
    };
    // Exactly, in integers: a float would round 2^64 - 2 and let 1.5 bytes
    // pass as 1.
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') || fraction.len() > 18 {
        return Err(not_a_size());
    }
    let digits = |part: &str| -> Result<u128, String> {
        if part.is_empty() {
            Ok(0)
        } else {
            part.parse::<u128>().map_err(|_| not_a_size())
        }
    };
    let scale = 10_u128.pow(fraction.len() as u32);
    let bytes = digits(whole)?
        .checked_mul(u128::from(factor))
        .zip(digits(fraction)?.checked_mul(u128::from(factor)))
        .and_then(|(whole, fraction)| {
            (fraction % scale == 0).then(|| whole.checked_add(fraction / scale))?
        });
    let Some(bytes) = bytes else {
        return Err(format!(
            "{text:?}: a size must be a whole number of bytes, below 2^64"
        ));
    };
    match u64::try_from(bytes) {
        Ok(bytes) if bytes >= 1 => Ok(bytes),
        _ => Err(format!(
            "{text:?}: a size must be at least 1 byte and below 2^64"
        )),
    }
}

/// A count of bytes as people read it: `4,000,648 (4.0 MB)`, decimal
/// units as `--memory-limit` takes them.
pub(crate) fn human_bytes(bytes: u64) -> String {
    let digits = bytes.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    if bytes < 1_000 {
        return format!("{grouped} B");
    }
    format!("{grouped} ({})", indicatif::DecimalBytes(bytes))
}

/// `taskgraph generate --value-bytes`: a [`size`] of at most 1 TiB.
pub(crate) fn value_bytes(text: &str) -> Result<u64, String> {
    let bytes = size(text)?;
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

    #[test]
    fn bytes_read_as_people_read_them() {
        assert_eq!(super::human_bytes(8), "8 B");
        assert_eq!(super::human_bytes(4_000_648), "4,000,648 (4.00 MB)");
        assert_eq!(super::human_bytes(160_001_944), "160,001,944 (160.00 MB)");
    }

    #[test]
    fn sizes_in_bytes_and_units() {
        assert_eq!(size("4096"), Ok(4096));
        assert_eq!(size("128MB"), Ok(128_000_000));
        assert_eq!(size("128 MiB"), Ok(128 << 20));
        assert_eq!(size("1.5gb"), Ok(1_500_000_000));
        assert_eq!(size("2KiB"), Ok(2048));
        assert_eq!(size("1.5KiB"), Ok(1536));
        assert_eq!(size(".5kb"), Ok(500));
        // Exactly, to the last byte below 2^64.
        assert_eq!(size("18446744073709551614"), Ok(u64::MAX - 1));
        assert_eq!(size("18446744073709551615"), Ok(u64::MAX));
        for bad in [
            "",
            "0",
            "-1MB",
            "NaN",
            "inf",
            "12 parsecs",
            "1e400",
            "MB",
            ".",
            "1.2.3",
            "18446744073709551616",
            "20000000000GB",
        ] {
            assert!(size(bad).is_err(), "{bad:?}");
        }
        // No fraction of a byte.
        for fraction in ["1.5", "0.5b", "1.0001KB", "0.3KiB"] {
            let err = size(fraction).unwrap_err();
            assert!(err.contains("whole number of bytes"), "{fraction}: {err}");
        }
    }

    #[test]
    fn seconds_are_finite_positive_and_at_most_a_day() {
        assert_eq!(seconds("0.5"), Ok(0.5));
        assert_eq!(seconds("86400"), Ok(86_400.0));
        for bad in [
            "", "0", "-1", "NaN", "inf", "-inf", "1e300", "1e19", "86401", "x",
        ] {
            assert!(seconds(bad).is_err(), "{bad:?}");
        }
    }
}
