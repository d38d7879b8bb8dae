"""The paper analyses of ``sifter analyze``, as data frames (the same library functions, the
same columns as the CLI's ``--csv``). ``trace`` is anything :func:`sifter.simulate` takes for
one trace (path, generator spec, keys array, ``(keys, sizes)``, dict).

>>> from sifter import analyze
>>> df = analyze.hand("zipf:alpha=1.0,n=1000,requests=20000,seed=1", size="0.1", every=5000)
>>> list(df["request"])
[5000, 10000, 15000, 20000]
"""

from __future__ import annotations

import os
import warnings
from typing import List, Optional, Sequence, Tuple, Union

from . import _native
from . import _frame_of, _join, _trace_args


def _run(kind, trace, policies, size, format, **kw):
    source, keys, sizes, name = _trace_args(trace, 0)
    pols = None if policies is None else _join(policies, "policies")
    cols = _native.analyze(kind, source, keys, sizes, name, format, pols, str(size), **kw)
    return _frame_of(cols)


def intervals(trace, policies: Union[str, Sequence[str]] = "fifo,lru,sieve,s3fifo", size="0.1", window: int = 100_000, format: Optional[str] = None):
    """Miss ratio per window of ``window`` requests (the SIEVE paper's Fig. 10a)."""
    return _run("intervals", trace, policies, size, format, n=window)


def ideal(trace, policies: Union[str, Sequence[str]] = "fifo,lru,sieve", size="0.1", every: Optional[int] = None, phases: int = 1, format: Optional[str] = None):
    """Ideal object ratio over time, sampled every ``every`` requests (default: 200 samples),
    against the ``size`` most requested objects of the trace or of each of ``phases`` parts
    (the SIEVE paper's Figs. 8b-10b)."""
    return _run("ideal", trace, policies, size, format, n=every, phases=phases)


def warmup(trace, policies: Union[str, Sequence[str]] = "lru,multistep-lru,sieve", size="0.1", window: Optional[int] = None, format: Optional[str] = None):
    """Hit ratio per window after a cache full of garbage (the multi-step LRU paper's Fig. 15)."""
    return _run("warmup", trace, policies, size, format, n=window)


def hand(trace, size="0.1", every: Optional[int] = None, format: Optional[str] = None):
    """SIEVE's hand position over time (the SIEVE paper's Fig. 9c)."""
    return _run("hand", trace, None, size, format, n=every)


def vectors(trace, sizes="0.001,0.01,0.1", p: int = 4, m: int = 2, format: Optional[str] = None):
    """Multi-step LRU: the share of hits in each vector per cache size (its paper's Fig. 12)."""
    return _run("vectors", trace, None, _join(sizes, "sizes"), format, p=p, m=m)


def compare(traces: Sequence[Union[str, "os.PathLike[str]"]], policies: Union[str, Sequence[str]] = "lru,arc,s3fifo,sieve", size="0.1", format: Optional[str] = None):
    """Miss-ratio reduction from FIFO across traces (the SIEVE paper's Figs. 3 and 5):
    ``(summary, per_trace)`` data frames — per policy P10/P25/mean/P75/P90 of the reduction and
    the share of traces it is best on; per trace and policy the miss ratios and the reduction.
    Traces that cannot be read are skipped with a warning, as ``sifter analyze compare`` does."""
    if isinstance(traces, (str, os.PathLike)):
        traces = [traces]
    summary, rows, skipped = _native.analyze_compare([os.fspath(t) for t in traces], format, _join(policies, "policies"), str(size))
    for msg in skipped:
        warnings.warn(msg, stacklevel=2)
    return _frame_of(summary), _frame_of(rows)
