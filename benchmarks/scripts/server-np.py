#!/usr/bin/env python3
"""Aggregate decode rate of N concurrent streams through an OpenAI-compatible server, goss-gpu's or llama-server.

For each stream count N the server is started with N slots, warmed with one request, and then sent N
completion requests at once (a 7-token prompt, T tokens each, greedy) R times. The aggregate rate is the
completion tokens of the N replies divided by the wall time from the first send to the last reply, so the
prompts' prefill is inside it (short prompts keep that small); the ratio is to one stream of the same run.
The same client measures both engines, so their ratios compare (issue 15: llama-server's `-np` scaling).

usage: server-np.py --engine goss --jar cli/target/goss-gpu.jar --model M [-np 1,2,4,8] [-t 2] [-n 64] [-r 3]
       server-np.py --engine llama --llama-server BIN --model M.gguf [...]
The server runs with the given threads; anything else on the machine skews the figures (run it quiet).
"""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

PROMPT = "The history of the printing press begins"  # 7 tokens of o200k
# llama-server gets 7 token ids instead: the recipe's synthetic GGUFs carry a vocabulary that tokenizes text to nothing
PROMPT_IDS = [976, 5678, 328, 290, 25560, 4115, 18015]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port, path, body, timeout=600):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.load(r)


def start(args, n, port):
    if args.engine == "goss":
        java = os.path.join(subprocess.check_output([os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "find-jdk.sh")],
                                                    text=True).strip(), "bin", "java")
        cmd = [java, "-jar", args.jar, "serve", "--model", args.model, "--backend", "cpu", "--threads", str(args.threads),
               "--parallel", str(n), "-c", str(args.ctx), "--port", str(port)]
    else:
        cmd = [args.llama_server, "-m", args.model, "-t", str(args.threads), "-np", str(n), "-c", str(n * args.ctx),
               "--port", str(port), "--no-webui"]
    log = open(os.path.join(args.out, f"{args.engine}-np{n}.log"), "w")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 600
    while time.time() < deadline:
        if p.poll() is not None:
            sys.exit(f"server-np: the {args.engine} server exited with {p.returncode}: see {log.name}")
        try:
            models = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2))
            args.model_id = models["data"][0]["id"]
            return p
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.5)
    p.terminate()
    sys.exit(f"server-np: the {args.engine} server did not answer in 600 s: see {log.name}")


def generate(args, port):
    """One request of T tokens; the tokens generated."""
    if args.engine == "llama":  # its native endpoint takes token ids; ignore_eos: T tokens whatever the random model writes
        r = post(port, "/completion", {"prompt": PROMPT_IDS, "n_predict": args.n, "temperature": 0, "ignore_eos": True,
                                       "cache_prompt": False})
        return r["tokens_predicted"]
    r = post(port, "/v1/completions", {"model": args.model_id, "prompt": PROMPT, "max_tokens": args.n, "temperature": 0})
    return r["usage"]["completion_tokens"]


def batch_counters(args, port):
    """goss-gpu's batched steps and the sequences they served so far (from /metrics); None for llama-server."""
    if args.engine != "goss":
        return None
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    values = {}
    for line in text.splitlines():
        for name in ("goss_batch_steps_total", "goss_batch_sequences_total"):
            if line.startswith(name + " "):
                values[name] = float(line.split()[1])
    return values.get("goss_batch_steps_total", 0), values.get("goss_batch_sequences_total", 0)


def round_of(args, port, n):
    """N requests at once: (completion tokens, wall seconds)."""
    results, errors = [], []

    def one():
        try:
            results.append(generate(args, port))
        except Exception as e:  # reported below, not swallowed
            errors.append(repr(e))

    threads = [threading.Thread(target=one) for _ in range(n)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if errors:
        sys.exit(f"server-np: {len(errors)} of {n} requests failed: {errors[0]}")
    if sum(results) < n * args.n // 2:
        sys.exit(f"server-np: the {args.engine} server generated {sum(results)} tokens for {n} requests of {args.n}")
    return sum(results), wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", choices=["goss", "llama"], required=True)
    ap.add_argument("--jar", default="cli/target/goss-gpu.jar")
    ap.add_argument("--llama-server", default="/tmp/llama/src/build/bin/llama-server")
    ap.add_argument("--model", required=True)
    ap.add_argument("-np", default="1,2,4,8", help="stream counts (default 1,2,4,8)")
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-n", type=int, default=64, help="tokens per stream (default 64)")
    ap.add_argument("-r", type=int, default=3, help="timed rounds per stream count (default 3)")
    ap.add_argument("--ctx", type=int, default=1024, help="context per slot of either server (default 1024)")
    ap.add_argument("--out", default="/tmp", help="folder for the servers' logs")
    args = ap.parse_args()
    counts = [int(x) for x in args.np.split(",")]
    rows = []
    for n in counts:
        port = free_port()
        p = start(args, n, port)
        try:
            round_of(args, port, 1)  # warm-up (goss-gpu's JIT, llama's first-use allocations)
            rates = []
            before = batch_counters(args, port)
            for _ in range(args.r):
                tokens, wall = round_of(args, port, n)
                rates.append(tokens / wall)
            after = batch_counters(args, port)
            # how many streams a step served on average: n when every step held all of them
            per_step = (after[1] - before[1]) / (after[0] - before[0]) if after and after[0] > before[0] else None
            rows.append((n, statistics.median(rates), min(rates), max(rates), per_step))
            print(f"server-np: {args.engine} np={n}: {rows[-1][1]:.2f} t/s aggregate"
                  + (f", {per_step:.2f} sequences per step" if per_step else ""), file=sys.stderr)
        finally:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
    one = next((r[1] for r in rows if r[0] == 1), None)
    print(f"| engine | streams | aggregate t/s (median of {args.r}) | range | vs 1 stream | sequences per step |")
    print("|---|---:|---:|---:|---:|---:|")
    for n, med, lo, hi, per_step in rows:
        ratio = f"{med / one:.2f}x" if one else ""
        print(f"| {args.engine} | {n} | {med:.2f} | {lo:.2f} to {hi:.2f} | {ratio} | {f'{per_step:.2f}' if per_step else ''} |")


if __name__ == "__main__":
    main()
