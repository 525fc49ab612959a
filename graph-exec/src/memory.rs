//! What the machine's memory allows: the defaults for a run's memory limit
//! and for the largest value a built-in op makes, which follow the smallest
//! of the machine's memory, the process's cgroup and its address-space
//! limit.

use std::path::Path;

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

/// The memory limit of this process's cgroup, in bytes: the smallest
/// limit on the path from its group up to the root, for cgroup v2
/// (`memory.max`) and v1 (`memory.limit_in_bytes`) alike, since a group is
/// held to the limits of every group above it; `None` where no limit is
/// set or the files cannot be read.
pub fn cgroup_memory_limit() -> Option<u64> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    cgroup_limit_under(Path::new("/sys/fs/cgroup"), &membership)
}

/// [`cgroup_memory_limit`] for the groups `membership` (a
/// `/proc/<pid>/cgroup` text) names, in the hierarchies mounted at `root`.
fn cgroup_limit_under(root: &Path, membership: &str) -> Option<u64> {
    let mut limit = None;
    for line in membership.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(group)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let group = group.trim_start_matches('/');
        let (top, file) = if controllers.is_empty() {
            (root.to_path_buf(), "memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            (root.join("memory"), "memory.limit_in_bytes")
        } else {
            continue;
        };
        // From the group up; where the group is not there (a container
        // that mounts its own group as the root) the path still ends at
        // the top, whose file is the group's.
        let mut dir = top.join(group);
        loop {
            let read = std::fs::read_to_string(dir.join(file)).ok();
            limit = min_known(limit, read.as_deref().and_then(cgroup_value));
            if dir == top || !dir.pop() {
                break;
            }
        }
    }
    limit
}

/// How many processes the kernel's out-of-memory killer has killed since
/// the machine started (Linux's `/proc/vmstat` `oom_kill`, which counts
/// those a cgroup's limit made too); `None` where it is not told.
///
/// ```
/// if let Some(before) = graph_exec::memory::oom_kills() {
///     assert!(graph_exec::memory::oom_kills().unwrap() >= before);
/// }
/// ```
pub fn oom_kills() -> Option<u64> {
    std::fs::read_to_string("/proc/vmstat")
        .ok()?
        .lines()
        .find_map(|line| line.strip_prefix("oom_kill ")?.trim().parse().ok())
}

/// The process's address-space limit (`RLIMIT_AS`, its soft limit), in
/// bytes, as `/proc/self/limits` gives it; `None` where it is unlimited or
/// unknown.
pub fn address_space_limit() -> Option<u64> {
    std::fs::read_to_string("/proc/self/limits")
        .ok()
        .as_deref()
        .and_then(address_space_in)
}

/// What an address-space limit leaves this process for results, in
/// bytes: the limit ([`address_space_limit`]), less what the process has
/// mapped already (`VmSize`) and what each thread of a run will reserve
/// ([`THREAD_RESERVE`], for as many threads as the machine has cores);
/// `None` where no limit is set.
pub fn address_space_left() -> Option<u64> {
    let limit = address_space_limit()?;
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    Some(limit.saturating_sub(address_space_needed(threads)))
}

/// The address space this process needs to run `threads` threads: what it
/// has mapped already (`VmSize`, 0 where unknown) and [`THREAD_RESERVE`]
/// for each.
///
/// ```
/// let one = graph_exec::memory::address_space_needed(1);
/// assert!(graph_exec::memory::address_space_needed(4) >= one + 3 * graph_exec::memory::THREAD_RESERVE);
/// ```
pub fn address_space_needed(threads: usize) -> u64 {
    let mapped = std::fs::read_to_string("/proc/self/status")
        .ok()
        .as_deref()
        .and_then(mapped_in)
        .unwrap_or(0);
    mapped.saturating_add((threads as u64).saturating_mul(THREAD_RESERVE))
}

/// The address space one thread of a run takes before it holds a result:
/// its allocator's first segment (32 MiB) and its stack (2 MiB and a
/// guard).
pub const THREAD_RESERVE: u64 = 36 << 20;

/// The most memory this process may use, in bytes: the smallest of the
/// machine's memory, its cgroup's limit and what its address-space limit
/// leaves ([`address_space_left`]); `None` where none of them is known.
///
/// ```
/// let ceiling = graph_exec::memory::memory_ceiling();
/// if let (Some(ceiling), Some((total, _))) = (ceiling, graph_exec::memory::machine_memory()) {
///     assert!(ceiling <= total);
/// }
/// ```
pub fn memory_ceiling() -> Option<u64> {
    [
        machine_memory().map(|(total, _)| total),
        cgroup_memory_limit(),
        address_space_left(),
    ]
    .into_iter()
    .fold(None, min_known)
}

/// The bytes a run holds at most by default: three quarters of the memory
/// available when it starts, or of the process's ceiling
/// ([`memory_ceiling`]) where that is lower, so that results that do not
/// fit spill to disk before the process runs out. Where nothing says,
/// 8 GiB.
pub fn default_memory_limit() -> u64 {
    let available = machine_memory().map(|(_, available)| available);
    min_known(available, memory_ceiling()).map_or(8 << 30, |bytes| bytes / 4 * 3)
}

/// The largest value a built-in op makes by default: half of the process's
/// ceiling ([`memory_ceiling`]; 4 GiB where nothing says).
pub fn default_value_limit() -> u64 {
    memory_ceiling().map_or(4 << 30, |bytes| bytes / 2)
}

/// The smaller of two limits, either of which may be unknown.
fn min_known(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A cgroup memory limit file's value: `None` for v2's `max` and for v1's
/// "no limit" (a number near 2^63).
fn cgroup_value(text: &str) -> Option<u64> {
    let value: u64 = text.trim().parse().ok()?;
    (value < 1 << 62).then_some(value)
}

/// The `VmSize` of a `/proc/<pid>/status` text, in bytes.
fn mapped_in(status: &str) -> Option<u64> {
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmSize:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// The soft `Max address space` of a `/proc/<pid>/limits` text.
fn address_space_in(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max address space"))?;
    line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_values_read_limits_and_no_limits() {
        assert_eq!(cgroup_value("1073741824\n"), Some(1 << 30));
        assert_eq!(cgroup_value("max\n"), None);
        assert_eq!(cgroup_value("9223372036854771712\n"), None);
        assert_eq!(cgroup_value(""), None);
    }

    #[test]
    fn the_address_space_limit_is_the_soft_one() {
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max stack size            8388608              unlimited            bytes     \n\
                      Max address space         6144000000           unlimited            bytes     \n";
        assert_eq!(address_space_in(limits), Some(6_144_000_000));
        let unlimited = limits.replace("6144000000", "unlimited");
        assert_eq!(address_space_in(&unlimited), None);
        assert_eq!(address_space_in("Max open files 1024 4096 files"), None);
    }

    /// A cgroup hierarchy under a temporary root: `files` are (path,
    /// text) pairs.
    fn hierarchy(files: &[(&str, &str)]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = root.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        root
    }

    #[test]
    fn a_cgroup_is_held_to_the_limits_of_the_groups_above_it() {
        const NONE_V1: &str = "9223372036854771712\n";
        // v1: a child group with no limit of its own under a parent of 300 MB
        // (only the group's own file used to be read).
        let v1 = hierarchy(&[
            ("memory/memory.limit_in_bytes", NONE_V1),
            ("memory/jobs/memory.limit_in_bytes", "314572800\n"),
            ("memory/jobs/run/memory.limit_in_bytes", NONE_V1),
        ]);
        let membership = "4:memory:/jobs/run\n3:cpu:/\n";
        assert_eq!(cgroup_limit_under(v1.path(), membership), Some(314_572_800));
        // The tighter of the group's own and its parent's.
        std::fs::write(
            v1.path().join("memory/jobs/run/memory.limit_in_bytes"),
            "1000\n",
        )
        .unwrap();
        assert_eq!(cgroup_limit_under(v1.path(), membership), Some(1000));
        // A container: its group is mounted as the root.
        let container = hierarchy(&[("memory/memory.limit_in_bytes", "5000\n")]);
        assert_eq!(cgroup_limit_under(container.path(), membership), Some(5000));
        // v2 alike, and no limit anywhere is none.
        let v2 = hierarchy(&[
            ("a/memory.max", "max\n"),
            ("a/b/memory.max", "4096\n"),
            ("a/b/c/memory.max", "max\n"),
        ]);
        assert_eq!(cgroup_limit_under(v2.path(), "0::/a/b/c\n"), Some(4096));
        assert_eq!(cgroup_limit_under(v2.path(), "0::/a\n"), None);
    }

    #[test]
    fn the_mapped_size_is_read_in_bytes() {
        let status = "Name:\ttaskgraph\nVmPeak:\t  1270440 kB\nVmSize:\t  352940 kB\n";
        assert_eq!(mapped_in(status), Some(352_940 * 1024));
        assert_eq!(mapped_in("Name:\tx\n"), None);
    }

    #[test]
    fn the_smallest_known_limit_wins() {
        assert_eq!(min_known(Some(3), Some(2)), Some(2));
        assert_eq!(min_known(None, Some(2)), Some(2));
        assert_eq!(min_known(Some(3), None), Some(3));
        assert_eq!(min_known(None, None), None);
    }
}
