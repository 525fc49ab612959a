"""Two runs of `cargo xtask bench` side by side: the divan tables of the
crates asked for, read from two BENCHMARKS.md files (before and after a
change), joined by benchmark name, with the ratio after/before of each
median, the geometric mean per crate, and its slowest and fastest rows.

Usage:

    python3 scripts/bench_side_by_side.py BEFORE.md AFTER.md graph-order graph-exec ...
"""

import math
import re
import sys

UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def seconds(text):
    number, unit = text.split()
    return float(number) * UNITS[unit]


def table(path, crate):
    """The medians of `crate`'s section of a BENCHMARKS.md, by benchmark."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    match = re.search(f"<!-- bench:{crate}:start -->(.*?)<!-- bench:{crate}:end -->", text, re.S)
    if not match:
        sys.exit(f"{path}: no section for {crate}")
    rows = {}
    for line in match.group(1).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells[1]
    return rows


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    before_path, after_path, crates = sys.argv[1], sys.argv[2], sys.argv[3:]
    out = []
    for crate in crates:
        before, after = table(before_path, crate), table(after_path, crate)
        common = [name for name in after if name in before]
        ratios = [(seconds(after[name]) / seconds(before[name]), name) for name in common]
        if not ratios:
            continue
        geomean = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios))
        slowest, fastest = max(ratios), min(ratios)
        out += [
            f"**{crate}**: {len(ratios)} benchmarks, after/before geometric mean {geomean:.2f}; "
            f"slowest `{slowest[1]}` {slowest[0]:.2f}, fastest `{fastest[1]}` {fastest[0]:.2f}.",
            "",
            "<details><summary>every benchmark</summary>",
            "",
            "| benchmark | before | after | after/before |",
            "|---|---:|---:|---:|",
        ]
        for ratio, name in sorted(ratios, key=lambda r: r[1]):
            out.append(f"| `{name}` | {before[name]} | {after[name]} | {ratio:.2f} |")
        out += ["", "</details>", ""]
    print("\n".join(out))


if __name__ == "__main__":
    main()
