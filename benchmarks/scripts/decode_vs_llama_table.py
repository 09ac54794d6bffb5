#!/usr/bin/env python3
"""The table of benchmarks/scripts/decode-vs-llama.sh (issue 42's "Done when"), from the raw outputs it left in OUT_DIR.

usage: decode_vs_llama_table.py OUT_DIR   (prints markdown; also writes OUT_DIR/table.md)

Reads run.env, probe-<model>-r<k>.txt (the C probe's line), fresh-<kind>-<model>-r<k>.txt (after each run, the probe's fresh
read against the same read again, over the model's size), goss-<model>-r<k>.json (goss-gpu bench -o json),
llama-<model>-r<k>.json (llama-bench -o json) and optimes-<model>.log (goss-gpu bench --op-times). Every round's
timed repetitions are pooled; the table gives their medians. Shares of bandwidth are against the median of the
run's C probes; both engines' GB/s use goss-gpu's count of the bytes a token must read. With events.tsv (every probe and
engine run in time order), each run's t/s is also set against the mean of the probes just before and after it ("paired"),
since a shared host's memory can change speed between one probe per round and the run; a run whose two probes differ by
more than 20 % is counted as one the memory's speed changed during.
"""
import json
import os
import re
import statistics
import sys

from cpu_vs_llama_table import first_json, read_env  # the same run.env and llama-bench JSON as cpu-vs-llama.sh

ROUND_FILE = re.compile(r"^(goss2|goss|llama|probe)-(.+)-r(\d+)\.(json|txt)$")
FRESH_FILE = re.compile(r"^fresh-(goss2|goss|llama)-(.+)-r(\d+)\.txt$")
FRESH_LINE = re.compile(r"\(([0-9]+) %; C streaming probe: .* drawn out of ([0-9.]+) GiB")
PROFILE_HEAD = re.compile(r"^(tg\d+), time per op kind over (\d+) tokens(?: \(GB/s against the probe's ([0-9.]+) GB/s\)"
                          r"| \(GB/s against the C probe passes around each token: ([0-9.]+-[0-9.]+) GB/s; .*\))?:$")
# "  moe gate_up     1.234  40.0%    1.200   3.1%     120.00     50.1    78.2%" (older logs: a whole percent)
PROFILE_ROW = re.compile(r"^  (\S+(?: (?:gate_up|down|other))?)\s+([0-9.]+)\s+([0-9.]+)%(?:\s+([0-9.]+)\s+([0-9.]+)%)?"
                         r"\s+([0-9.]+)\s+([0-9.]+)(?:\s+([0-9.]+)%)?(?:\s+([0-9.]+))?$")


def layers(model):
    m = re.search(r"-L(\d+)-", model)
    return int(m.group(1)) if m else None


def profile(path, gen):
    """The tg<gen> op table of a --op-times log: (its lines, the probe it was taken against, rows as dicts)."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        h = PROFILE_HEAD.match(line)
        if not h or h.group(1) != f"tg{gen}":
            continue
        block, rows = [line], []
        for row in lines[i + 1:]:
            if not row.startswith("  "):
                break
            block.append(row)
            m = PROFILE_ROW.match(row)
            if m:
                gbps, pct, around = float(m.group(7)), m.group(8), float(m.group(9)) if m.group(9) else None
                # older logs print a whole percent; there GB/s over the row's probe is the nearer figure
                share = 100 * gbps / around if pct and "." not in pct and around else float(pct) if pct else None
                rows.append(dict(op=m.group(1), ms=float(m.group(2)), mb=float(m.group(6)), gbps=gbps, pct=share, probe=around))
        # the probe it was taken against: one figure, or the range of the passes between its tokens
        return block, h.group(3) or h.group(4), rows
    return None


def paired(out, data):
    """From events.tsv: per (kind, model), the shares of each run's median t/s × bytes against the mean of the probes
    around it, and how many runs had their probes differ by more than 20 %."""
    path = os.path.join(out, "events.tsv")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        events = [line.split() for line in f if line.strip()]
    shares = {}
    for i, ev in enumerate(events):
        if ev[0] != "run":
            continue
        kind, model, rnd = ev[1], ev[2], ev[3]
        before = next((float(e[1]) for e in reversed(events[:i]) if e[0] == "probe"), None)
        after = next((float(e[1]) for e in events[i + 1:] if e[0] == "probe"), None)
        name = os.path.join(out, f"{kind}-{model}-r{rnd}.json")
        d = data.get(model)
        if before is None or after is None or d is None or not d["bytes"] or not os.path.exists(name):
            continue
        with open(name) as f:
            text = f.read()
        try:
            if kind == "llama":
                ts = [float(x) for r in first_json(text) for x in r["samples_ts"] if int(r["n_prompt"]) == 0]
            else:
                ts = [x for r in json.loads(text)["rows"] if r["depth"] == 0 and r.get("streams", 0) == 0 for x in r["samples"]]
        except (ValueError, KeyError, IndexError):
            continue
        if not ts:
            continue
        s = shares.setdefault((kind, model), dict(shares=[], flips=0))
        s["shares"].append(d["bytes"] * statistics.median(ts) / 1e9 / ((before + after) / 2))
        if abs(before - after) > 0.2 * min(before, after):
            s["flips"] += 1
    return shares


def main(out):
    env = read_env(os.path.join(out, "run.env"))
    gen = int(env.get("gen", 32))
    data = {}  # model -> dict(goss=[t/s], llama=[t/s], probe=[GB/s], bytes=int)
    problems = []
    for name in sorted(os.listdir(out)):
        m = ROUND_FILE.match(name)
        if not m:
            continue
        kind, model = m.group(1), m.group(2)
        d = data.setdefault(model, dict(goss=[], goss2=[], llama=[], probe=[], bytes=0))
        with open(os.path.join(out, name)) as f:
            text = f.read()
        try:
            if kind == "probe":
                d["probe"].append(float(text.split()[0]))
            elif kind in ("goss", "goss2"):
                rows = [r for r in json.loads(text)["rows"] if r["nGen"] == gen and r["depth"] == 0 and r.get("streams", 0) == 0]
                d[kind] += rows[0]["samples"]
                d["bytes"] = rows[0]["bytesPerToken"]
            else:
                rows = [r for r in first_json(text) if int(r["n_gen"]) == gen and int(r["n_prompt"]) == 0]
                d["llama"] += [float(x) for x in rows[0]["samples_ts"]]
        except (ValueError, KeyError, IndexError) as e:
            problems.append(f"{name}: unreadable ({e})")

    med = lambda xs: statistics.median(xs) if xs else None
    pairs = paired(out, data)
    lines = [f"## Decode at the memory limit: goss-gpu against llama.cpp, tg{gen}, {env.get('rounds')} rounds pooled", ""]
    lines.append(f"- {env.get('date')} on {env.get('host')}: {env.get('cpu')}, {env.get('cores')} CPUs, {env.get('threads')} threads; "
                 f"flags: {env.get('flags', '').strip()}; transparent huge pages: {env.get('thp')}")
    lines.append(f"- load average before {env.get('load_before')}, after {env.get('load_after')}; nice {env.get('nice')}")
    if env.get("commit2"):
        lines.append(f"- goss-gpu #2 (the second jar, the B of an A/B): {env.get('commit2')}")
    mmap = "" if env.get("llama_mmap", "1") == "1" else ", -mmp 0: the model read into memory it allocates, not mapped"
    lines.append(f"- goss-gpu {env.get('commit')}; llama.cpp {env.get('llama_commit')} ({env.get('llama_bench')}{mmap})")
    lines.append(f"- {env.get('reps')} timed repetitions per engine per round, the engines taking turns; medians of the pooled repetitions; "
                 "GB/s = goss-gpu's bytes per token × t/s for both engines; shares against the median of the C probes "
                 "(backend-cpu/kernels/stream_probe.c, one before each model in each round)")
    lines.append("")
    lines.append("| model | bytes/token | C probe GB/s (rounds) | goss-gpu t/s | llama.cpp t/s | ratio | goss-gpu GB/s | of probe | llama.cpp GB/s | of probe |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    verdicts = []
    for model in sorted(data, key=lambda m: (layers(m) or 0, m)):
        d = data[model]
        g, l, p = med(d["goss"]), med(d["llama"]), med(d["probe"])
        gb = lambda ts: d["bytes"] * ts / 1e9 if ts and d["bytes"] else None
        fmt = lambda x, f="{:.2f}": f.format(x) if x is not None else "–"
        pct = lambda x: f"{100 * x / p:.0f} %" if x is not None and p else "–"
        ratio = g / l if g and l else None
        lines.append(f"| {model} | {d['bytes'] / 1e9:.3f} GB | {fmt(p, '{:.1f}')} ({', '.join(f'{x:.1f}' for x in d['probe'])}) | "
                     f"{fmt(g)} (n={len(d['goss'])}) | {fmt(l)} (n={len(d['llama'])}) | {fmt(ratio, '{:.2f}×')} | {fmt(gb(g), '{:.1f}')} | "
                     f"{pct(gb(g))} | {fmt(gb(l), '{:.1f}')} | {pct(gb(l))} |")
        if d["goss2"]:
            g2 = med(d["goss2"])
            lines.append(f"| {model}, goss-gpu #2 | | | {fmt(g2)} (n={len(d['goss2'])}) | {fmt(l)} | {fmt(g2 / l if g2 and l else None, '{:.2f}×')} | "
                         f"{fmt(gb(g2), '{:.1f}')} | {pct(gb(g2))} | #2 / #1: {fmt(g2 / g if g2 and g else None, '{:.3f}×')} | |")
        n = layers(model)
        share = gb(g) / p if gb(g) and p else None
        pair = {k: pairs.get((k, model)) for k in ("goss", "goss2", "llama")}
        if any(pair.values()):
            said = lambda k, who: (f"{who} {100 * med(pair[k]['shares']):.0f} % (runs: "
                                   + ", ".join(f"{100 * x:.0f}" for x in pair[k]["shares"]) + f"; {pair[k]['flips']} with a speed change)"
                                   if pair[k] else f"{who} –")
            lines.append(f"| {model}, paired with the probes around each run | | | | | | "
                         + " · ".join(said(k, w) for k, w in (("goss", "goss-gpu"), ("goss2", "#2"), ("llama", "llama.cpp")) if pair[k] or k != "goss2")
                         + " | | | |")
        if n == 4:
            verdicts.append(("4-layer tg%d at least 1.15× llama.cpp" % gen, ratio is not None and ratio >= 1.15, fmt(ratio, "{:.2f}×")))
        if n in (4, 24):
            verdicts.append((f"{n}-layer tg{gen} at least 85 % of the C probe", share is not None and share >= 0.85,
                             f"{100 * share:.1f} %" if share is not None else "–"))
        if n in (4, 24) and pair["goss"]:
            ps = med(pair["goss"]["shares"])
            verdicts.append((f"{n}-layer tg{gen} at least 85 % of the probes around its runs (paired)", ps >= 0.85, f"{100 * ps:.1f} %"))
    fresh = {}  # model -> [(round, kind, share, span)]
    for name in sorted(os.listdir(out)):
        m = FRESH_FILE.match(name)
        f = m and FRESH_LINE.search(open(os.path.join(out, name)).read())
        if f:
            fresh.setdefault(m.group(2), []).append((int(m.group(3)), m.group(1), int(f.group(1)), f.group(2)))
    if fresh:
        lines.append("")
        lines.append("Fresh memory just after each run (the C probe reading 4 MiB chunks drawn at random out of the model's size "
                     "against the same GiB again; far under 100 %: the host was slowing reads of memory allocated lately and not "
                     "read since, as a model's experts are, and a run near it may have been slowed with them):")
        for model, rs in sorted(fresh.items(), key=lambda kv: (layers(kv[0]) or 0, kv[0])):
            rs.sort()
            lines.append(f"- {model} (out of {rs[0][3]} GiB): " + ", ".join(f"{k} r{r} {x} %" for r, k, x, _ in rs))
    for model in sorted(data, key=lambda m: (layers(m) or 0, m)):
        prof2 = profile(os.path.join(out, f"optimes2-{model}.log"), gen)
        if prof2 is not None:
            lines += ["", f"### {model}: `bench --op-times` of goss-gpu #2, tg{gen} (C probe {prof2[1]} GB/s)", "", "```"] + prof2[0] + ["```"]
        prof = profile(os.path.join(out, f"optimes-{model}.log"), gen)
        if prof is None:
            continue
        block, probe, rows = prof
        between = any(r["probe"] is not None for r in rows)
        against = f"against the C probe passes between its tokens, {probe} GB/s" if between else f"against its own C probe, {probe} GB/s"
        lines += ["", f"### {model}: `bench --op-times`, tg{gen} ({against})", "", "```"] + block + ["```"]
        step = next((r for r in rows if r["op"] == "step"), None)
        n = layers(model)
        if between and step is not None and step["pct"] is not None and n in (4, 24):
            verdicts.append((f"{n}-layer tg{gen} at least 85 % of the probe passes between its tokens (op table's step row)",
                             step["pct"] >= 85, f"{step['pct']:.1f} %"))
        big = [r for r in rows if r["op"] != "step" and r["mb"] > 50]
        low = [r for r in big if r["pct"] is None or r["pct"] < 80]
        verdicts.append((f"{model}: no op over 50 MB below 80 % of the probe", not low and bool(big),
                         ", ".join(f"{r['op']} {r['mb']:.0f} MB at {r['gbps']:.1f} GB/s ({r['pct']:.1f} %)" for r in big) or "no op over 50 MB found"))
    if verdicts:
        lines += ["", "### Done when (issue 42)", ""]
        lines += [f"- {'yes' if ok else 'NO'}: {what} ({got})" for what, ok, got in verdicts]
    if problems:
        lines += ["", "Problems: " + "; ".join(problems)]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: decode_vs_llama_table.py OUT_DIR")
    main(sys.argv[1])
