#!/usr/bin/env python3
"""The table of benchmarks/scripts/cpu-vs-llama.sh, from the raw outputs it left in OUT_DIR.

usage: cpu_vs_llama_table.py OUT_DIR   (prints markdown; also writes OUT_DIR/table.md)

Reads run.env (key=value lines), llama-<model>-<group>.json (llama-bench -o json), goss<i>-<model>-<group>.json
(goss-gpu bench -o json) and goss<i>-<model>-<group>.md (older goss-gpu builds without -o json: their markdown rows),
each with .r<k> before the extension when the run had several rounds: a test's timed repetitions of every round are
pooled (mean ± sample stddev of all of them).
"""
import json
import os
import re
import sys

ENGINES_FILE = re.compile(r"^(llama|goss(\d+))-(.+)-(d\d+)(?:\.r\d+)?\.(json|md)$")
MD_ROW = re.compile(r"^\|\s*[^|]*\|\s*cpu\s*\|\s*((?:pp|tg)\d+(?: @ d\d+)?)\s*\|\s*([0-9.]+)\s*±\s*([0-9.]+)\s*\|")


def test_name(n_prompt, n_gen, depth):
    t = f"pp{n_prompt}" if n_gen == 0 else f"tg{n_gen}" if n_prompt == 0 else f"pp{n_prompt}+tg{n_gen}"
    return f"{t} @ d{depth}" if depth > 0 else t


def first_json(text):
    """The first JSON array or object in text: llama-bench builds may print other lines around it."""
    starts = [i for i in (text.find("["), text.find("{")) if i >= 0]
    if not starts:
        raise ValueError("no JSON in the output")
    return json.JSONDecoder().raw_decode(text[min(starts):])[0]


def read_env(path):
    env = {}
    with open(path) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                env[k] = v
    return env


def pooled(old, samples, **extra):
    """A test's entry with these repetitions' t/s added to those of earlier rounds: mean and sample stddev of all."""
    xs = (old["samples"] if old else []) + list(samples)
    mean = sum(xs) / len(xs)
    sd = (sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5 if len(xs) > 1 else 0.0
    d = dict(old or {}, **extra)
    d.update(ts=mean, sd=sd, samples=xs)
    return d


def sort_key(test):
    m = re.match(r"(pp|tg)(\d+)(?: @ d(\d+))?", test)
    return (int(m.group(3) or 0), m.group(1) == "tg", int(m.group(2))) if m else (1 << 30, True, 0)


def main(out):
    env = read_env(os.path.join(out, "run.env"))
    jars = sorted(int(k[3:]) for k in env if re.fullmatch(r"jar\d+", k))
    results = {}   # model -> test -> engine ("llama" or jar index) -> dict(ts, sd, pct, bytes)
    bandwidths, probes, llama_info, problems, devices = [], [], {}, [], {}
    for name in sorted(os.listdir(out)):
        m = ENGINES_FILE.match(name)
        if not m:
            continue
        engine = "llama" if m.group(1) == "llama" else int(m.group(2))
        model = m.group(3)
        path = os.path.join(out, name)
        with open(path) as f:
            text = f.read()
        if not text.strip():
            problems.append(f"{name}: empty (see {name.rsplit('.', 1)[0]}.log)")
            continue
        tests = results.setdefault(model, {})
        try:
            if engine == "llama":
                for r in first_json(text):
                    t = test_name(int(r["n_prompt"]), int(r["n_gen"]), int(r.get("n_depth", 0)))
                    e = tests.setdefault(t, {})
                    e["llama"] = pooled(e.get("llama"), [float(x) for x in r.get("samples_ts") or [r["avg_ts"]]])
                    for k in ("build_commit", "flash_attn", "type_k", "type_v", "n_batch", "n_ubatch"):
                        if k in r:
                            llama_info[k] = r[k]
            elif name.endswith(".json"):
                report = first_json(text)
                devices[engine] = report.get("device", "?")
                if report.get("bandwidth"):
                    bandwidths.append(report["bandwidth"])
                if report.get("streamProbe"):
                    probes.append(report["streamProbe"])
                for r in report["rows"]:
                    e = tests.setdefault(r["test"], {})
                    e[engine] = pooled(e.get(engine), r.get("samples") or [r["tokensPerSecond"]], bytes=r.get("bytesPerToken", 0))
            else:
                for line in text.splitlines():
                    row = MD_ROW.match(line)
                    if row:
                        e = tests.setdefault(row.group(1), {})
                        e[engine] = pooled(e.get(engine), [float(row.group(2))])  # (only the mean is in the markdown)
        except (ValueError, KeyError, TypeError) as e:
            problems.append(f"{name}: could not read it ({e})")

    lines = [f"# goss-gpu cpu vs llama.cpp, {env.get('date', '?')} on {env.get('host', '?')}", ""]
    lines.append(f"- cpu: {env.get('cpu', '?')}; flags: {env.get('flags', '').strip() or 'none of interest'}")
    if env.get('isa'):
        lines.append(f"- instruction set held to {env['isa']}")
    if bandwidths:
        gb = [b["gbPerSecond"] for b in bandwidths]
        b0 = bandwidths[0]
        spread = f" (over {len(gb)} runs: {min(gb):.1f} to {max(gb):.1f})" if len(gb) > 1 else ""
        loads = [b["loadAverage"] for b in bandwidths if b.get("loadAverage", -1) >= 0]
        during = f"; load average during the probes {min(loads):.2f} to {max(loads):.2f}" if loads else ""
        lines.append(f"- read bandwidth: {max(gb):.1f} GB/s{spread}, {b0['threads']} threads reading a "
                     f"{b0['bytes'] / 2**30:.1f} GiB buffer with {b0['method']}, best pass (goss-gpu bench's Java probe){during}")
        if probes:
            gp = [p["gbPerSecond"] for p in probes]
            lines.append(f"- C streaming probe (what decode's share of bandwidth is taken against): {max(gp):.1f} GB/s"
                         + (f" (over {len(gp)} runs: {min(gp):.1f} to {max(gp):.1f})" if len(gp) > 1 else "")
                         + f", {probes[0]['threads']} threads, {probes[0]['bytes'] / 2**30:.1f} GiB, {probes[0]['method']}")
    else:
        lines.append("- read bandwidth: not measured (no goss-gpu build with the probe ran)")
    for i in jars:
        label = "goss-gpu" if len(jars) == 1 else f"goss-gpu {chr(ord('A') + i)}"
        lines.append(f"- {label}: {env.get(f'jar{i}')} at commit {env.get(f'commit{i}', '?')}"
                     + (f"; {devices[i]}" if i in devices else ""))
    info = ", ".join(f"{k} {v}" for k, v in llama_info.items())
    lines.append(f"- llama.cpp: {env.get('llama_bench', '?')}" + (f" ({info})" if info else ""))
    rounds = int(env.get("rounds", "1") or 1)
    if rounds > 1:
        lines.append(f"- {rounds} rounds: each group of tests ran {rounds} times, the engines taking turns; each figure pools "
                     f"the repetitions of all rounds")
    lines.append(f"- {env.get('threads')} threads both, {env.get('reps')} timed repetitions after warm-up runs (llama.cpp 1, "
                 f"goss-gpu {env.get('warm', '?')}, for its JIT); load average before {env.get('load_before', '?')}, "
                 f"after {env.get('load_after', '?')}")
    warnings = []
    # (the load after includes the run's own engines, so only the load before says whether others were busy)
    try:
        load, cores = float(env.get("load_before", "").split()[0]), int(env.get("cores", "0"))
        if cores and load > 0.5 * cores:
            warnings.append(f"load average {load:.2f} on {cores} cores before the run")
    except (ValueError, IndexError):
        pass
    if env.get("nice", "0") not in ("", "0"):
        warnings.append(f"run under nice {env['nice']}")
    if warnings:
        lines.append(f"- **WARNING: {'; '.join(warnings)}: other processes competed for the cores, and llama.cpp's "
                     "spin-waiting threads suffer most from that. These ratios are not a fair comparison.**")
    lines.append("")

    labels = ["goss-gpu"] if len(jars) == 1 else [f"goss-gpu {chr(ord('A') + i)}" for i in jars]
    head = ["model", "test"] + [f"{l} t/s" for l in labels] + ["llama.cpp t/s"] + [f"{l} / llama" for l in labels]
    if len(jars) == 2:
        head.append("B / A")
    head += [f"{labels[0]} % of bw", "llama % of bw"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|---|---|" + "---:|" * (len(head) - 2))

    def ts(d):
        return f"{d['ts']:.2f} ± {d['sd']:.2f}" if d else "n/a"

    def ratio(a, b):
        return f"{a['ts'] / b['ts']:.2f}x" if a and b and b["ts"] > 0 else ""

    bw = max((b["gbPerSecond"] for b in bandwidths), default=0)
    for model in sorted(results, key=lambda m: int(re.search(r"-L(\d+)-", m).group(1)) if re.search(r"-L(\d+)-", m) else 0):
        for test in sorted(results[model], key=sort_key):
            e = results[model][test]
            goss = [e.get(i) for i in jars]
            llama = e.get("llama")
            cells = [model.replace(".gguf", ""), test] + [ts(g) for g in goss] + [ts(llama)] + [ratio(g, llama) for g in goss]
            if len(jars) == 2:
                cells.append(ratio(goss[1], goss[0]))
            g0 = goss[0] or {}
            # pooled over rounds: the pooled t/s × the bytes per token (the same every round) ÷ the best bandwidth probed
            cells.append(f"{100 * g0['ts'] * g0['bytes'] / 1e9 / bw:.0f} %" if g0.get("bytes") and bw > 0 and "@" not in test
                         and test.startswith("tg") else "")
            # llama.cpp's share with goss-gpu's byte count: at depth 0 only (its KV cache is F16, goss-gpu's F32)
            cells.append(f"{100 * llama['ts'] * g0['bytes'] / 1e9 / bw:.0f} %"
                         if llama and g0.get("bytes") and bw > 0 and "@" not in test else "")
            lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("t/s: mean ± sample stddev. x / llama: goss-gpu t/s ÷ llama.cpp t/s, taken in this run. % of bw: decode bytes per")
    lines.append("token (goss-gpu's count, the tensors as it holds them: active experts, all other weights, the unembedding, the KV cache) × t/s ÷")
    lines.append("the read bandwidth; llama.cpp's share uses the same byte count, so only at depth 0.")
    for p in problems:
        lines.append(f"- problem: {p}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: cpu_vs_llama_table.py OUT_DIR (the folder cpu-vs-llama.sh wrote)")
    main(sys.argv[1])
