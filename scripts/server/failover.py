"""Two `sifter serve` processes behind pymemcache's consistent-hashing HashClient: keys spread
over both; one server is stopped mid-run; the other keeps serving its keys and no client call
hangs (each has a timeout, and the dead node is retried no more than the client allows).

Usage: python3 failover.py path/to/sifter
"""
import socket
import subprocess
import sys
import time

from pymemcache.client.hash import HashClient


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(sifter, port):
    p = subprocess.Popen([sifter, "serve", "-l", "127.0.0.1", "-p", str(port), "-m", "32", "-t", "2"],
                         stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return p
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"sifter serve did not start on port {port}")


def main():
    sifter = sys.argv[1]
    ports = [free_port(), free_port()]
    procs = [start(sifter, p) for p in ports]
    try:
        nodes = [("127.0.0.1", p) for p in ports]
        c = HashClient(nodes, connect_timeout=1, timeout=1, use_pooling=False,
                       ignore_exc=True, retry_attempts=1, dead_timeout=60)
        keys = [f"key{i}" for i in range(2000)]
        for k in keys:
            assert c.set(k, k.encode(), noreply=False), k
        # Keys are spread over both servers.
        per_node = []
        for p in ports:
            s = socket.create_connection(("127.0.0.1", p))
            s.sendall(b"stats\r\n")
            data = b""
            while not data.endswith(b"END\r\n"):
                data += s.recv(65536)
            s.close()
            items = int([l for l in data.split(b"\r\n") if l.startswith(b"STAT curr_items ")][0].split()[2])
            per_node.append(items)
        assert all(n > 200 for n in per_node), per_node
        print(f"keys per server: {per_node}")
        # Stop one server mid-run.
        procs[0].terminate()
        procs[0].wait(timeout=10)
        t0 = time.time()
        hits = 0
        slowest = 0.0
        for k in keys:
            t = time.time()
            v = c.get(k)  # ignore_exc: a dead node's keys read as misses, never hang
            slowest = max(slowest, time.time() - t)
            if v is not None:
                assert v == k.encode(), (k, v)
                hits += 1
        took = time.time() - t0
        print(f"after stopping one server: {hits} of {len(keys)} keys served, "
              f"slowest call {slowest:.3f} s, {took:.2f} s in all")
        assert slowest < 2.5, "a client call hung"
        assert abs(hits - per_node[1]) <= per_node[1] // 20 + 5, (hits, per_node)
        # The survivor still takes writes for its keys.
        survivors = [k for k in keys if c.get(k) is not None][:50]
        for k in survivors:
            assert c.set(k, b"new", noreply=False), k
            assert c.get(k) == b"new", k
        print("failover: OK")
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=10)


if __name__ == "__main__":
    main()
