//! What the machine's memory allows: the defaults for a run's memory limit
//! and for the largest value a built-in op makes.

/// The machine's memory, in bytes, and the memory available now, as Linux's
/// `/proc/meminfo` gives them (`MemTotal`, `MemAvailable`); `None` where
/// that file does not exist or says otherwise.
pub fn machine_memory() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = text.lines().find(|line| line.starts_with(name))?;
        let kib: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        kib.checked_mul(1024)
    };
    let total = field("MemTotal:")?;
    Some((total, field("MemAvailable:").unwrap_or(total)))
}

/// The bytes a run holds at most by default: three quarters of the memory
/// available when it starts, so that results that do not fit spill to disk
/// before the machine runs out. Where the machine does not say, 8 GiB.
pub fn default_memory_limit() -> u64 {
    machine_memory().map_or(8 << 30, |(_, available)| available / 4 * 3)
}

/// The largest value a built-in op makes by default: half of the machine's
/// memory (4 GiB where the machine does not say).
pub fn default_value_limit() -> u64 {
    machine_memory().map_or(4 << 30, |(total, _)| total / 2)
}
