"""The queueing model of "Can increasing the hit ratio hurt cache throughput?" (``sifter model``):
a cache as a closed network of concurrent work and one-at-a-time structures (list locks, head
and tail pointers). Times in microseconds, throughput in millions of requests per second.

>>> from sifter import model
>>> p, peak = model.pstar("lru", disk_us=100, mpl=72, cores=72)
>>> 0.0 < p < 1.0
True
>>> model.pstar("mobius", disk_us=100, mpl=72, cores=72)[0]  # FIFO-family: never falls
1.0
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _native

POLICIES = ["lru", "lru-global", "problru", "fifo", "clock", "slru", "s3fifo", "sieve", "mobius"]


def solve(policy: str, hit: float, disk_us: float = 100.0, mpl: int = 72, cores: Optional[int] = None, solver: str = "mva") -> Dict[str, Any]:
    """Throughput of ``policy`` at hit ratio ``hit`` with ``mpl`` requests in flight and a
    backend of ``disk_us`` µs, on ``cores`` cores (None: CPU work is not queued). ``solver``:
    ``"mva"`` (exact mean-value analysis: ``x``, ``response_us``, per-station ``queue`` and
    ``utilization``) or ``"bound"`` (the paper's asymptotic bound: ``x``, ``bottleneck``)."""
    return _native.model_solve(policy, float(hit), float(disk_us), int(mpl), cores, solver)


def pstar(policy: str, disk_us: float = 100.0, mpl: int = 72, cores: Optional[int] = None) -> Tuple[float, float]:
    """``(p*, peak)``: the hit ratio past which ``policy``'s throughput falls (1.0: never) and
    the bound's throughput there (Mops/s)."""
    return _native.model_pstar(policy, float(disk_us), int(mpl), cores)


def advise(policies: Sequence[str], cores: int, disk_us: float, mpl: Optional[int] = None, hit: Optional[float] = None) -> List[Dict[str, Any]]:
    """``sifter model advise``: for each policy, p*, the peak throughput and (with ``hit``)
    the throughput predicted at that hit ratio, on ``cores`` cores with ``mpl`` (default:
    ``cores``) requests in flight."""
    rows = _native.model_advise(list(policies), int(cores), int(mpl if mpl is not None else cores), float(disk_us), hit)
    return [{"policy": p, "pstar": s, "peak_mops": k, "at_hit_mops": h} for p, s, k, h in rows]
