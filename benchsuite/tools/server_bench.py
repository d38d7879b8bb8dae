#!/usr/bin/env python3
"""`sifter serve` against stock memcached, driven by `sifter kvtg` (issue 14's comparisons).

Every configuration runs both servers alternately in the same time window, a fresh server per
run, on free 127.0.0.1 ports; each server is stopped by its PID. Experiments (pick with -e):

  throughput  90 % get / 10 % set, 100-byte values, keys filled first, 16 and 64 connections
  pipelined   gets only, 16 connections, pipelining depth 16
  hitratio    Zipf 1.0 over 1M keys of 1000-byte values against -m 64 on both (a cache far
              smaller than the working set), read-through (a miss SETs the key); hit ratio and
              items stored (`stats` curr_items)
  rss         resident set after SETs of 4x `-m` bytes
  policies    70 % get / 30 % add, normal keys (the NbQ-CLOCK report's Table 1 mix), hit ratio,
              items stored and throughput of each sifter policy and memcached
  objsizes    the report's Table 1: items stored and hit ratio in a fixed byte budget (-m 64)
              across object sizes 64 B - 4 KB, 70 % get / 30 % add, 1M keys,
              filled first, then a warm-up of the mix as long as the measured phase, normal and Zipf 1.0
              keys, for each sifter policy and memcached
  threads     the report's Fig. 7: 70 % get / 30 % add, Zipf 1.0 keys, 128-byte objects,
              throughput against server worker threads (1, 2) for each policy and memcached

Writes <out>/server.csv and prints a table. Usage:
  server_bench.py --sifter target/release/sifter [--memcached memcached] [-e a,b] [--rounds 3]
                  [--secs 5] [--out DIR]
"""
import argparse
import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_listening(port, proc, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"server on port {port} did not start")


def start(kind, args, mem_mb, threads=2, policy="mobius"):
    port = free_port()
    if kind == "memcached":
        cmd = [args.memcached, "-u", "root", "-l", "127.0.0.1", "-p", str(port), "-U", "0",
               "-t", str(threads), "-m", str(mem_mb), "-c", "4096"]
    else:
        cmd = [args.sifter, "serve", "-l", "127.0.0.1", "-p", str(port), "-m", str(mem_mb),
               "-t", str(threads), "-c", "4096", "--policy", policy]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port, proc)
    return proc, port


def stop(proc):
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def stats(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"stats\r\n")
    buf = b""
    while not buf.endswith(b"END\r\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()
    out = {}
    for line in buf.decode(errors="replace").splitlines():
        p = line.split()
        if len(p) == 3 and p[0] == "STAT":
            out[p[1]] = p[2]
    return out


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def kvtg(args, port, extra):
    out = tempfile.mkdtemp(prefix="kvtg-")
    cmd = [args.sifter, "kvtg", "-s", f"127.0.0.1:{port}", "-q", "--no-plots", "--json",
           "-o", out] + extra
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    shutil.rmtree(out, ignore_errors=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    j = json.loads(r.stdout)
    return next(p for p in j["phases"] if p["measured"])


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sifter", default="target/release/sifter")
    ap.add_argument("--memcached", default=shutil.which("memcached") or "memcached")
    ap.add_argument("-e", "--experiments",
                    default="throughput,pipelined,hitratio,rss,policies,objsizes,threads")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--objsizes-keys", default="normal,zipf",
                    help="key distributions of -e objsizes (normal, zipf)")
    ap.add_argument("--secs", type=float, default=5.0)
    ap.add_argument("--out", default="bench-server")
    args = ap.parse_args()
    if not shutil.which(args.memcached) and not os.path.exists(args.memcached):
        sys.exit("memcached not found (apt-get install memcached)")
    os.makedirs(args.out, exist_ok=True)
    rows = []
    secs = f"{args.secs}s"
    exps = args.experiments.split(",")

    def record(exp, config, server, rnd, m, extra=None):
        row = {"experiment": exp, "config": config, "server": server, "round": rnd,
               "requests_per_s": round(m["throughput"]), "get_hit_ratio": m["get_hit_ratio"],
               "p50_us": m["latency_us"]["p50"], "p99_us": m["latency_us"]["p99"],
               "p999_us": m["latency_us"]["p999"], "errors": m["errors"]}
        row.update(extra or {})
        rows.append(row)
        log(f"{exp:10} {config:28} {server:16} round {rnd}: {row['requests_per_s']:>9} req/s "
            f"p99 {row['p99_us']:.0f} µs hit {m['get_hit_ratio']}")

    servers = [("memcached", "mobius"), ("sifter", "mobius")]
    for rnd in range(1, args.rounds + 1):
        if "throughput" in exps:
            for conns in (16, 64):
                for kind, pol in servers:
                    proc, port = start(kind, args, 1024)
                    try:
                        m = kvtg(args, port, ["-k", "uniform:n=100k", "--fill", "100k",
                                              "-m", "get=0.9,set=0.1", "--value-size", "100",
                                              "-c", str(conns), "-d", secs])
                    finally:
                        stop(proc)
                    record("throughput", f"90/10 get/set, {conns} conns", kind, rnd, m)
        if "pipelined" in exps:
            for kind, pol in servers:
                proc, port = start(kind, args, 1024)
                try:
                    m = kvtg(args, port, ["-k", "uniform:n=100k", "--fill", "100k", "-m", "get=1",
                                          "-c", "16", "--pipeline", "16", "-d", secs])
                finally:
                    stop(proc)
                record("pipelined", "gets, 16 conns, depth 16", kind, rnd, m)
        if "hitratio" in exps:
            for kind, pol in servers:
                proc, port = start(kind, args, 64)
                try:
                    m = kvtg(args, port, ["-k", "zipf:alpha=1.0,n=1m", "-m", "get=1",
                                          "--fill-on-miss", "--value-size", "1000", "-c", "16",
                                          "--warmup", secs, "-d", secs])
                    items = int(stats(port).get("curr_items", "0"))
                finally:
                    stop(proc)
                record("hitratio", "zipf 1.0, 1M keys, 1000 B, -m 64", kind, rnd, m,
                       {"items": items})
        if "rss" in exps and rnd == 1:
            for kind, pol in servers:
                proc, port = start(kind, args, 64)
                try:
                    time.sleep(0.5)
                    base = rss_kib(proc.pid)
                    m = kvtg(args, port, ["-k", "uniform:n=256k", "--fill", "256k",
                                          "-m", "get=1", "--value-size", "1000", "-c", "16",
                                          "-r", "1"])
                    items = int(stats(port).get("curr_items", "0"))
                    rss = rss_kib(proc.pid)
                finally:
                    stop(proc)
                record("rss", "256k x 1000 B SETs into -m 64", kind, rnd, m,
                       {"items": items, "rss_mib": round(rss / 1024, 1),
                        "base_rss_mib": round(base / 1024, 1)})
        if "policies" in exps:
            for kind, pol in [("memcached", "-"), ("sifter", "nbq-clock"), ("sifter", "mobius"),
                              ("sifter", "sieve"), ("sifter", "s3fifo"), ("sifter", "lru")]:
                proc, port = start(kind, args, 64, policy=pol)
                try:
                    m = kvtg(args, port, ["-k", "normal:n=1m", "-m", "get=0.7,add=0.3",
                                          "--value-size", "128", "--fill", "1m", "-c", "16",
                                          "-d", secs])
                    items = int(stats(port).get("curr_items", "0"))
                finally:
                    stop(proc)
                name = kind if kind == "memcached" else f"sifter {pol}"
                record("policies", "70/30 get/add, normal 1M keys, 128 B", name, rnd, m,
                       {"items": items})

        if "objsizes" in exps:
            dists = {"normal": "normal:n=1m", "zipf": "zipf:alpha=1.0,n=1m"}
            for keys, size in [(dists[k], z) for k in args.objsizes_keys.split(",")
                               for z in (64, 128, 256, 512, 1024, 2048, 4096)]:
                for kind, pol in [("memcached", "-"), ("sifter", "nbq-clock"),
                                  ("sifter", "mobius"), ("sifter", "sieve"),
                                  ("sifter", "s3fifo"), ("sifter", "lru")]:
                    proc, port = start(kind, args, 64, policy=pol)
                    try:
                        m = kvtg(args, port, ["-k", keys, "-m", "get=0.7,add=0.3",
                                              "--value-size", str(size), "--fill", "1m",
                                              "--warmup", secs, "-c", "16", "-d", secs])
                        items = int(stats(port).get("curr_items", "0"))
                    finally:
                        stop(proc)
                    name = kind if kind == "memcached" else f"sifter {pol}"
                    record("objsizes", f"70/30 get/add, {keys.split(':')[0]} 1M, {size} B",
                           name, rnd, m,
                           {"items": items, "object_bytes": size})
        if "threads" in exps:
            for t in (1, 2):
                for kind, pol in [("memcached", "-"), ("sifter", "nbq-clock"),
                                  ("sifter", "mobius"), ("sifter", "sieve"),
                                  ("sifter", "s3fifo"), ("sifter", "lru")]:
                    proc, port = start(kind, args, 64, threads=t, policy=pol)
                    try:
                        m = kvtg(args, port, ["-k", "zipf:alpha=1.0,n=1m", "-m", "get=0.7,add=0.3",
                                              "--value-size", "128", "--fill", "1m", "-c", "16",
                                              "-d", secs])
                    finally:
                        stop(proc)
                    name = kind if kind == "memcached" else f"sifter {pol}"
                    record("threads", f"70/30 get/add, zipf 1M, 128 B, -t {t}", name, rnd, m)

    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    path = os.path.join(args.out, "server.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    # Medians per (experiment, config, server).
    groups = {}
    for r in rows:
        groups.setdefault((r["experiment"], r["config"], r["server"]), []).append(r)
    print(f"{'experiment':10} {'config':38} {'server':17} {'req/s':>9} {'p99 µs':>8} "
          f"{'hit':>7} {'items':>8} {'rss MiB':>8} {'empty':>6}")
    for (e, c, s), rs in groups.items():
        med = lambda k: sorted(x[k] for x in rs if x.get(k) is not None)[len(rs) // 2] \
            if any(x.get(k) is not None for x in rs) else None
        hit = med("get_hit_ratio")
        print(f"{e:10} {c:38} {s:17} {med('requests_per_s'):>9} {med('p99_us'):>8.0f} "
              f"{(f'{hit:.4f}' if hit is not None else '-'):>7} {str(med('items') or '-'):>8} "
              f"{str(med('rss_mib') or '-'):>8} {str(med('base_rss_mib') or '-'):>6}")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
