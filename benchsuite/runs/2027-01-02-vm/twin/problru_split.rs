// Scratch: Prob-LRU(1-1/72)'s hit cost against a twin that never promotes and Mobius.
use sifter::Policy;
use sifter_lab::closed_loop::{sequences, Calibrator, Subject};
use std::sync::Arc;

fn main() {
    let keys = 100_000u64;
    let cap: u64 = std::env::args().nth(1).map_or(97_308, |s| s.parse().unwrap());
    let rounds: usize = std::env::args().nth(2).map_or(3, |s| s.parse().unwrap());
    let seqs = sequences(keys, 72);
    let stream: Arc<[u64]> = seqs.concat().into();
    let mk = |p: Policy, q: f64| {
        Calibrator::new(Subject::of(p, cap, q).unwrap(), cap, stream.clone(), 2, 1 << 18).unwrap()
    };
    let mut cs = [
        ("mobius", mk(Policy::Mobius, 0.5)),
        ("problru q=71/72", mk(Policy::ProbLru, 1.0 - 1.0 / 72.0)),
        ("problru q=1", mk(Policy::ProbLru, 1.0)),
        ("fifo", mk(Policy::Fifo, 0.5)),
    ];
    for r in 0..rounds {
        for (name, c) in cs.iter_mut() {
            let one = c.round(1);
            let two = c.round(2);
            println!(
                "round {r} {name:16} hit {:.4}  one: hit {:.1} ns miss {:.1} ns  two: hit {:.1} ns miss {:.1} ns",
                c.hit(),
                one.hit_us * 1e3,
                one.miss_us * 1e3,
                two.hit_us * 1e3,
                two.miss_us * 1e3
            );
        }
    }
}
