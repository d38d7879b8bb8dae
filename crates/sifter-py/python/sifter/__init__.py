"""sifter from Python: trace-driven cache simulation, trace reading, the hit-ratio/throughput
queueing model, a concurrent cache and the throughput experiments (``bench``, ``closed_loop``,
``lab``) — the same library the ``sifter`` CLI is built on.

>>> import sifter
>>> df = sifter.simulate("zipf:alpha=1.0,n=10000,requests=200000,seed=1",
...                      policies="lru,sieve", sizes="0.01,0.1", progress=False)
>>> sorted(df["spec"].unique())
['lru', 'sieve']

Bad input raises ``ValueError`` with the CLI's message; Ctrl-C (``KeyboardInterrupt``) stops a
sweep cleanly.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._native import Cache

__all__ = [
    "simulate",
    "mrc",
    "read_trace",
    "iter_trace",
    "policies",
    "cache_policies",
    "Cache",
    "model",
    "analyze",
    "bench",
    "closed_loop",
    "lab",
    "COLUMNS",
]

__version__ = _native.__version__

#: The columns of :func:`simulate`'s result, as in ``sifter sim --csv``.
COLUMNS = [
    "trace",
    "policy",
    "spec",
    "size",
    "capacity",
    "bytes",
    "requests",
    "misses",
    "miss_ratio",
    "byte_miss_ratio",
    "seconds",
]

TraceLike = Union[str, "os.PathLike[str]", np.ndarray, Tuple[Any, Any], Dict[str, Any]]


def _join(x: Union[str, Sequence[Any]], what: str) -> str:
    """A comma-separated list from a string or a sequence (of strings or numbers)."""
    if isinstance(x, str):
        return x
    try:
        items = [str(i) for i in x]
    except TypeError:
        raise ValueError(f"{what}: give a comma-separated string or a list, not {type(x).__name__}") from None
    if not items:
        raise ValueError(f"no {what} given")
    return ",".join(items)


def _keys_array(keys: Any, what: str) -> np.ndarray:
    a = np.asarray(keys)
    if a.ndim != 1:
        raise ValueError(f"{what}: keys must be a one-dimensional array, got shape {a.shape}")
    if a.dtype.kind not in "iu":
        raise ValueError(f"{what}: keys must be integers, got dtype {a.dtype}")
    # Signed keys are taken by their 64-bit pattern, as the trace readers take signed ids.
    return np.ascontiguousarray(a.astype(np.int64, copy=False).view(np.uint64) if a.dtype.kind == "i" else a.astype(np.uint64, copy=False))


def _sizes_array(sizes: Any, n: int, what: str) -> np.ndarray:
    a = np.asarray(sizes)
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(f"{what}: {n} keys but sizes of shape {a.shape}: give one size per key")
    if a.dtype.kind not in "iu":
        raise ValueError(f"{what}: sizes must be integers, got dtype {a.dtype}")
    if n and (a.min() < 0 or a.max() > 0xFFFFFFFF):
        raise ValueError(f"{what}: sizes must be between 0 and 4294967295 bytes")
    return np.ascontiguousarray(a.astype("<u4"))


def _trace_args(trace: TraceLike, i: int) -> Tuple[Optional[str], Optional[bytes], Optional[bytes], str]:
    """(source, keys, sizes, name) of one trace argument."""
    if isinstance(trace, (str, os.PathLike)):
        return os.fspath(trace), None, None, os.fspath(trace)
    name = f"array{i}"
    if isinstance(trace, dict):
        if "keys" not in trace:
            raise ValueError("a trace given as a dict needs 'keys' (and optionally 'sizes', 'name')")
        name = str(trace.get("name", name))
        keys, sizes = trace["keys"], trace.get("sizes")
    elif isinstance(trace, tuple):
        if len(trace) != 2:
            raise ValueError("a trace given as a tuple is (keys, sizes)")
        keys, sizes = trace
    else:
        keys, sizes = trace, None
    k = _keys_array(keys, name)
    s = None if sizes is None else _sizes_array(sizes, k.shape[0], name).tobytes()
    return None, k.astype("<u8", copy=False).tobytes(), s, name


class _Progress:
    """A tqdm bar per phase of a sweep (when tqdm is installed and progress is on)."""

    def __init__(self, enabled: bool):
        self.bar = None
        self.tqdm = None
        if enabled:
            try:
                from tqdm.auto import tqdm

                self.tqdm = tqdm
            except ImportError:
                pass

    def __call__(self, label: str, done: int, total: int, new_phase: bool) -> None:
        if self.tqdm is None:
            return
        if new_phase or self.bar is None:
            self.close()
            self.bar = self.tqdm(total=total or None, desc=label, unit="req", unit_scale=True, leave=False)
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _frame(cols: Dict[str, list]):
    """A pandas DataFrame with :data:`COLUMNS`, else a pyarrow Table, else the dict."""
    return _frame_of({c: cols[c] for c in COLUMNS})


def _frame_of(cols: Dict[str, list]):
    """A pandas DataFrame, else a pyarrow Table, else the dict of columns."""
    try:
        import pandas as pd

        return pd.DataFrame(cols)
    except ImportError:
        pass
    try:
        import pyarrow as pa

        return pa.table(cols)
    except ImportError:
        return cols


def simulate(
    traces: Union[TraceLike, List[TraceLike]],
    policies: Union[str, Sequence[str]] = "fifo,lru,clock,sieve,s3fifo",
    sizes: Union[str, Sequence[Union[str, float, int]]] = "0.001,0.01,0.1",
    bytes: bool = False,
    format: Optional[str] = None,
    threads: Optional[int] = None,
    mode: str = "auto",
    seed: int = 0,
    progress: bool = True,
):
    """Miss ratios of ``policies`` × ``sizes`` on each trace, as ``sifter sim`` computes them.

    traces: a trace file path, a synthetic workload spec (``"zipf:alpha=1.0,n=1000000,
        requests=10000000,seed=1"``), a 1-D integer numpy array of keys, a ``(keys, sizes)``
        tuple, a dict with ``keys``/``sizes``/``name``, or a list of these.
    policies: names with parameters (``"sieve,lru,gclock(bits=3)"``); see :func:`policies`.
    sizes: fractions of the footprint (``0.01``), counts (``"10k"``), bytes (``"64MiB"``), or
        ``"from:to:points"`` (log-spaced fractions).
    bytes: byte mode (capacity in bytes, object sizes from the trace).
    format: trace format spec (default: detected), e.g. ``"oracleGeneral"``, ``"csv:..."``.
    threads: worker threads (default: all cores).
    mode: ``"auto"``, ``"memory"`` or ``"stream"`` (files and generators only).

    Returns a pandas DataFrame with :data:`COLUMNS` (a pyarrow Table when pandas is absent, a
    dict of lists when both are). Warnings of the sweep (sizes skipped, ...) are Python
    warnings; bad input raises ``ValueError``.
    """
    if isinstance(traces, list):
        items = traces
    else:
        items = [traces]
    if not items:
        raise ValueError("no trace given")
    pol = _join(policies, "policies")
    siz = _join(sizes, "sizes")
    cols: Dict[str, list] = {c: [] for c in COLUMNS}
    bar = _Progress(progress)
    try:
        for i, t in enumerate(items):
            source, keys, szs, name = _trace_args(t, i)
            out, notices = _native.run_sweep(
                source, keys, szs, name, pol, siz, bool(bytes), format, mode, int(seed), threads,
                bar if progress else None,
            )
            bar.close()
            for is_warning, text in notices:
                if is_warning:
                    warnings.warn(text, stacklevel=2)
            for c in COLUMNS:
                cols[c].extend(out[c])
    finally:
        bar.close()
    return _frame(cols)


def mrc(
    trace: TraceLike,
    policies: Union[str, Sequence[str]] = "fifo,lru,sieve,s3fifo,belady",
    sizes: str = "0.001:0.5:16",
    bytes: bool = False,
    format: Optional[str] = None,
    threads: Optional[int] = None,
    progress: bool = True,
):
    """A miss-ratio curve (``sifter analyze mrc``): :func:`simulate` over a log-spaced grid of
    sizes (``"from:to:points"``, fractions of the footprint) for each policy."""
    return simulate(trace, policies, sizes, bytes=bytes, format=format, threads=threads, progress=progress)


def iter_trace(path: Union[str, "os.PathLike[str]"], format: Optional[str] = None, chunk: int = 1 << 20) -> Iterator[Dict[str, np.ndarray]]:
    """Reads a trace (file or synthetic spec) in chunks of up to ``chunk`` requests: yields
    dicts of numpy arrays ``keys`` (uint64), ``sizes`` (uint32), ``times`` (uint64, the trace's
    own unit; the request index where it has none). Memory stays bounded by the chunk."""
    r = _native.TraceChunks(os.fspath(path), format, int(chunk))
    while True:
        c = r.next_chunk()
        if c is None:
            return
        k, s, t = c
        yield {
            "keys": np.frombuffer(k, dtype="<u8"),
            "sizes": np.frombuffer(s, dtype="<u4"),
            "times": np.frombuffer(t, dtype="<u8"),
        }


def read_trace(path: Union[str, "os.PathLike[str]"], format: Optional[str] = None) -> Dict[str, np.ndarray]:
    """The whole trace as numpy arrays ``keys``, ``sizes``, ``times`` (see :func:`iter_trace`
    for big files)."""
    parts = list(iter_trace(path, format))
    if not parts:
        return {
            "keys": np.zeros(0, dtype=np.uint64),
            "sizes": np.zeros(0, dtype=np.uint32),
            "times": np.zeros(0, dtype=np.uint64),
        }
    return {k: np.concatenate([p[k] for p in parts]) for k in ("keys", "sizes", "times")}


def policies() -> List[Dict[str, Any]]:
    """The simulator's policies: name, aliases, description and parameters (``sifter policies``)."""
    return [
        {
            "name": n,
            "aliases": a,
            "about": about,
            "params": [{"name": p, "default": d, "doc": doc} for p, d, doc in params],
        }
        for n, a, about, params in _native.policies()
    ]


def cache_policies() -> List[str]:
    """The policies of :class:`Cache`."""
    return _native.cache_policies()


def _number(x: str) -> Any:
    """A CSV cell as an int or a float where it is one, else the text (None when empty)."""
    if x == "":
        return None
    for t in (int, float):
        try:
            return t(x)
        except ValueError:
            pass
    return x


def _csv_frame(text: str):
    """CSV text as a pandas DataFrame (else a pyarrow Table, else a dict of columns)."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return _frame_of({})
    header, body = rows[0], rows[1:]
    return _frame_of({h: [_number(r[i]) if i < len(r) else None for r in body] for i, h in enumerate(header)})


def _list(x: Union[str, int, float, Sequence[Any]], what: str) -> str:
    """A comma-separated list from a string, a number or a sequence."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return str(x)
    return _join(x, what)


def _touch(touch) -> int:
    """``touch`` as the native call takes it (a count of bytes; the CLI checks the rest)."""
    t = int(touch)
    if not 0 <= t < 2**32:
        raise ValueError(f"touch: {t} bytes; it must be a multiple of 8 from 8 to 65536, or 0")
    return t


def bench(
    caches: Union[str, Sequence[str]] = "mobius,sieve,lru,quick_cache,moka",
    threads: Union[str, int, Sequence[int]] = "1,2,4",
    workload: str = "zipf:alpha=1.0,keys=1000000",
    mode: Union[str, Sequence[str]] = "shared",
    size: Union[str, float, int, Sequence[Union[float, int]]] = "0.1",
    requests: int = 1_000_000,
    duration: Optional[str] = None,
    sequence: int = 4_000_000,
    repeat: int = 3,
    sample_every: int = 256,
    fill: float = 0.98,
    warmup_passes: float = 0.5,
    warmup_limit: str = "30s",
    hit_only: bool = False,
    touch: int = 0,
    progress: bool = True,
):
    """Throughput, hit ratio and latency of concurrent caches side by side, as ``sifter bench``
    measures them (same options, same defaults): one row per cache × mode × size × thread
    count with the columns of ``sifter bench``'s ``results.csv`` (medians of ``repeat`` runs).
    A ``size`` is a fraction of one key space (a float: ``0.01``) or a number of entries (an
    int, or a string such as ``"10k"``), as ``sifter bench --size`` reads it.

    The measurement runs off the interpreter; Ctrl-C stops it (``KeyboardInterrupt``) before
    its next run. Bad options raise ``ValueError`` with the CLI's message, and so does a size
    whose cache the machine's memory cannot hold (its heap per entry measured at 100,000
    entries and extrapolated), before anything is built.

    >>> import sifter
    >>> df = sifter.bench("mobius,lru", threads=1, workload="zipf:alpha=1.0,keys=2000",
    ...                   sequence=5000, requests=2000, repeat=1, progress=False)
    >>> sorted(df["cache"])
    ['lru', 'mobius']
    """
    bar = _Progress(progress)
    try:
        text = _native.bench(
            _join(caches, "caches"), _list(threads, "threads"), workload, _join(mode, "mode"),
            _list(size, "size"), int(requests), duration, int(sequence), int(repeat),
            int(sample_every), float(fill), float(warmup_passes), warmup_limit, bool(hit_only),
            _touch(touch),
            bar if progress else None,
        )
    finally:
        bar.close()
    return _csv_frame(text)


def closed_loop(
    policies: Union[str, Sequence[str]] = "lru,fifo,clock,s3fifo,sieve,mobius",
    mpl: Union[int, Sequence[int]] = 8,
    backend_latency: str = "100us",
    sizes: Optional[Sequence[float]] = None,
    hit_ratios: Optional[Sequence[float]] = None,
    keys: int = 100_000,
    secs: float = 1.0,
    spin: bool = False,
    workers: str = "threads",
    cores: Optional[int] = None,
    progress: bool = True,
):
    """The closed-loop experiment of ``sifter bench closed-loop``: ``mpl`` workers against a
    cache whose misses wait ``backend_latency`` (sleeping, or busy-waiting with ``spin``), run
    as OS threads (``workers="threads"``) or by one event loop per core (``"loops"``), each
    point prefilled to steady state and put beside the calibrated queueing model. Points are
    cache ``sizes`` (fractions of ``keys``; default 0.001, 0.01, 0.05, 0.2, 0.5) or target
    ``hit_ratios`` (each policy's size found by the simulator; out-of-reach targets are
    skipped with a warning). Returns the CLI's ``--csv`` columns, one row per point."""
    if isinstance(policies, str):
        pols = [p for p in policies.split(",") if p.strip()]
    else:
        pols = [str(p) for p in policies]
    mpls = [int(mpl)] if isinstance(mpl, int) else [int(m) for m in mpl]
    bar = _Progress(progress)
    try:
        text, notices = _native.closed_loop(
            pols, mpls, backend_latency,
            None if sizes is None else [float(z) for z in sizes],
            None if hit_ratios is None else [float(h) for h in hit_ratios],
            int(keys), float(secs), bool(spin), str(workers), cores, bar if progress else None,
        )
    finally:
        bar.close()
    for is_warning, text_ in notices:
        if is_warning:
            warnings.warn(text_, stacklevel=2)
    return _csv_frame(text)


def lab(out: Union[str, "os.PathLike[str]"] = "lab-report", quick: bool = False, traces: Sequence[str] = (), progress: bool = True) -> Dict[str, Any]:
    """``sifter lab``: the default experiment suite (miss ratios of every simulator policy,
    the concurrent caches' throughput, the queueing model and the measured closed loop),
    written as one self-contained HTML report with CSV and JSON into ``out``. Returns
    ``{"files": [...], "findings": text}``. ``quick`` runs a smaller suite (about two minutes
    on two cores; the full one takes about 13)."""
    bar = _Progress(progress)
    try:
        files, findings = _native.lab(os.fspath(out), bool(quick), [os.fspath(t) for t in traces], bar if progress else None)
    finally:
        bar.close()
    return {"files": files, "findings": findings}


from . import analyze, model  # noqa: E402  (they use the helpers above)
