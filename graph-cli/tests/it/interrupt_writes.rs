//! An interrupt (SIGINT or SIGTERM) while a command writes its output leaves
//! no temporary file and the old output untouched, and exits with status 130.

use crate::common;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn temporary_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".tmp"))
        .collect()
}

#[test]
fn an_interrupted_write_leaves_nothing_behind() {
    for signal in ["-INT", "-TERM"] {
        let dir = common::scratch(&format!("interrupt-write{signal}"));
        let out = dir.join("out.json.gz");
        std::fs::write(&out, b"old").unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_taskgraph"))
            .args(["generate", "random", "--tasks", "1000000", "-o"])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the output is being written: its temporary file exists.
        let started = Instant::now();
        while temporary_files(&dir).is_empty() {
            assert!(
                child.try_wait().unwrap().is_none(),
                "the command ended before it wrote"
            );
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "no write began"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let status = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(130), "{signal}");
        assert_eq!(
            String::from_utf8_lossy(&output.stderr).trim_end(),
            "interrupted"
        );
        assert_eq!(temporary_files(&dir), Vec::<String>::new(), "{signal}");
        assert_eq!(std::fs::read(&out).unwrap(), b"old", "{signal}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
