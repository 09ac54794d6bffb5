#!/usr/bin/env python3
"""Turns `ncu --print-summary per-kernel` output (metrics gpu__time_duration.sum and dram__bytes_read.sum) into one
table: a row per kernel and launch shape, sorted by total time, with its calls, mean time, DRAM bytes per call and
the read rate they give. Usage: ncu-table.py NCU_OUTPUT > table.md (also runs here, on a file brought back)."""
import re
import sys

TIME = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
BYTES = {"byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}


def rows(text):
    for block in re.split(r"\n  (?=\S)", text):
        head = re.match(r"(\S+) \(([^)]*)\)x\(([^)]*)\), Device \d+, CC [\d.]+, Invocations (\d+)", block)
        t = re.search(r"gpu__time_duration.sum\s+(\S+)\s+\S+\s+\S+\s+(\S+)", block)
        d = re.search(r"dram__bytes_read.sum\s+(\S+)\s+\S+\s+\S+\s+(\S+)", block)
        if head and t and d:
            us = float(t.group(2).replace(",", "")) * TIME[t.group(1)]
            mb = float(d.group(2).replace(",", "")) * BYTES[d.group(1)] / 1e6
            yield head.group(1), f"({head.group(2)})x({head.group(3)})", int(head.group(4)), us, mb


def main(path):
    table = sorted(rows(open(path).read()), key=lambda r: -r[2] * r[3])
    print("| kernel | grid x block | calls | mean us | total ms | DRAM MB/call | GB/s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, shape, calls, us, mb in table:
        print(f"| {name} | {shape} | {calls} | {us:.2f} | {calls * us / 1e3:.2f} | {mb:.3f} | {mb / us * 1e3 if us else 0:.0f} |")
    print(f"\ntotal kernel time {sum(r[2] * r[3] for r in table) / 1e3:.2f} ms over {sum(r[2] for r in table)} launches")


if __name__ == "__main__":
    main(sys.argv[1])
