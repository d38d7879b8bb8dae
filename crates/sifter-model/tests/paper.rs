//! Validation against "Can increasing the hit ratio hurt cache throughput?" (Qiu, Yang,
//! Harchol-Balter): its closed-form bounds, equations (1)–(6); the LRU bottleneck switch at
//! p = 0.84; the published simulator's numbers (design note §2.2); and agreement of the three
//! solvers with each other.

use sifter_model::policies::{build, Params};
use sifter_model::sim::{simulate, SimOptions};
use sifter_model::solve::{bound, mva, pstar};

fn params(hit: f64, disk: f64, tail_zero: bool) -> Params {
    let overrides = if tail_zero { vec![("tail".to_string(), 0.0)] } else { vec![] };
    Params { hit, disk_us: disk, overrides, ..Params::default() }
}

/// One station visited once per request, then `think` µs away from it.
fn one_station(
    name: &str,
    station: sifter_model::network::Station,
    think: f64,
) -> sifter_model::network::Network {
    use sifter_model::network::{Network, Path, Step};
    Network {
        name: name.into(),
        stations: vec![station],
        paths: vec![Path {
            label: "all".into(),
            prob: 1.0,
            steps: vec![Step::Visit(0), Step::Think(think)],
        }],
    }
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-12)
}

#[test]
fn lru_bounds_are_equations_1_to_3() {
    for (disk, a, b) in [(100.0, 101.1, 99.3), (5.0, 6.1, 4.3), (500.0, 501.1, 499.3)] {
        for i in 0..=100 {
            let p = i as f64 / 100.0;
            let net = build("lru", &params(p, disk, true)).unwrap();
            let want = (72.0 / (a - b * p)).min(1.0 / 0.59f64.max(0.7 * p));
            let got = bound(&net, 72).x;
            assert!(close(got, want, 1e-9), "disk {disk} p {p}: {got} vs {want}");
        }
    }
}

#[test]
fn fifo_bounds_are_equations_4_to_6() {
    for (disk, a, b) in [(100.0, 101.24, 100.73), (5.0, 6.24, 5.73), (500.0, 501.24, 500.73)] {
        for i in 0..100 {
            let p = i as f64 / 100.0;
            let net = build("fifo", &params(p, disk, true)).unwrap();
            let want = (72.0 / (a - b * p)).min(1.0 / (0.73 - 0.73 * p));
            assert!(close(bound(&net, 72).x, want, 1e-9), "disk {disk} p {p}");
        }
    }
}

#[test]
fn lru_bottleneck_switches_at_0_84() {
    let (p, x) = pstar(|p| bound(&build("lru", &params(p, 5.0, true)).unwrap(), 72).x, 1000);
    assert!((p - 0.59 / 0.7).abs() < 1e-6, "p* = {p}");
    assert!(close(x, 1.0 / 0.59, 1e-6));
    assert_eq!(bound(&build("lru", &params(0.83, 5.0, true)).unwrap(), 72).bottleneck, "head");
    assert_eq!(bound(&build("lru", &params(0.85, 5.0, true)).unwrap(), 72).bottleneck, "delink");
    // FIFO-like policies never peak before p = 1.
    for pol in ["fifo", "clock", "mobius"] {
        let (p, _) =
            pstar(|p| bound(&build(pol, &params(p.min(0.999), 5.0, false)).unwrap(), 72).x, 1000);
        assert!(p >= 0.99, "{pol}: p* = {p}");
    }
}

#[test]
fn faster_disks_and_more_cores_move_pstar_earlier() {
    // Fig. 12's trend, from the bound as the paper computes it: p* is where the population term
    // meets the falling bottleneck term, never below 0.84 for LRU.
    let ps = |disk: f64, n: u32| {
        pstar(|p| bound(&build("lru", &params(p, disk, true)).unwrap(), n).x, 2000).0
    };
    let (d500, d100, d5) = (ps(500.0, 72), ps(100.0, 72), ps(5.0, 72));
    assert!(d500 > d100 && d100 >= d5, "p* by disk latency: {d500} {d100} {d5}");
    assert!((d500 - 501.1 / 549.7).abs() < 1e-4, "closed form 501.1 / (50.4 + 499.3): {d500}");
    let (c16, c72, c144) = (ps(100.0, 16), ps(100.0, 72), ps(100.0, 144));
    assert!(c16 > c72 && c72 >= c144, "p* by cores: {c16} {c72} {c144}");
    assert!((c144 - 0.59 / 0.7).abs() < 1e-4);
}

#[test]
fn published_simulator_points() {
    // LRU, 5 µs disk, MPL 72: ≈1.43 Mops/s at p = 0.997 and ≈1.70 at p = 0.588 (KIOPS 1428 / 1699);
    // FIFO at p = 0.9866: ≈99.4 Mops/s.
    let o = SimOptions { warmup: 20_000, requests: 300_000, batches: 20, seed: 7 };
    for (pol, p, want) in [("lru", 0.997, 1.428), ("lru", 0.588, 1.699), ("fifo", 0.9866, 99.4)] {
        let net = build(pol, &params(p, 5.0, false)).unwrap();
        let s = simulate(&net, 72, &o).unwrap();
        assert!(
            close(s.x, want, 0.04),
            "{pol} p {p}: simulated {:.3} ± {:.3}, published {want}",
            s.x,
            s.ci95
        );
    }
}

#[test]
fn solvers_agree() {
    let o = SimOptions { warmup: 10_000, requests: 200_000, batches: 20, seed: 3 };
    for pol in
        ["lru", "problru", "fifo", "clock", "slru", "s3fifo", "sieve", "mobius", "lru-global"]
    {
        for (p, disk) in [(0.5, 5.0), (0.9, 100.0), (0.99, 5.0)] {
            let net = build(pol, &params(p, disk, false)).unwrap();
            let (b, m, s) = (bound(&net, 72).x, mva(&net, 72).x, simulate(&net, 72, &o).unwrap());
            assert!(m <= b * (1.0 + 1e-9), "{pol} p {p}: MVA {m} above the bound {b}");
            // Exponential FCFS stations and delay stations: product form, MVA is exact.
            assert!(
                close(s.x, m, 0.03) || (s.x - m).abs() <= 2.0 * s.ci95,
                "{pol} p {p} disk {disk}: sim {:.4} ± {:.4} vs MVA {m:.4}",
                s.x,
                s.ci95
            );
        }
    }
}

#[test]
fn multi_server_cpu_station() {
    // Two cores as a 2-server station: throughput can never exceed 2 / (CPU demand).
    let p = Params { hit: 0.9, disk_us: 5.0, cpu_servers: Some(2), ..Params::default() };
    let net = build("mobius", &p).unwrap();
    let d_cpu = net.demands()[net.stations.iter().position(|s| s.name == "cpu").unwrap()];
    let m = mva(&net, 16).x;
    assert!(m <= 2.0 / d_cpu + 1e-9);
    let s = simulate(&net, 16, &SimOptions::default()).unwrap();
    assert!(close(s.x, m, 0.05), "sim {} vs MVA {m}", s.x);
}

#[test]
fn load_dependent_stations() {
    use sifter_model::network::{Dist, Station};
    let net = |servers: u32, slowdown: Vec<f64>| {
        one_station("ld", Station { slowdown, ..Station::new("cpu", 1.0, servers, Dist::Exp) }, 3.0)
    };
    // Two servers that each run at half speed once both are busy serve exactly like one
    // server: the same rate with one request present, the same with two or more.
    for n in [1, 2, 5, 40] {
        let (ld, one) = (mva(&net(2, vec![1.0, 2.0]), n), mva(&net(1, vec![]), n));
        assert!(close(ld.x, one.x, 1e-9), "n = {n}: {} vs {}", ld.x, one.x);
    }
    // A lock whose hold time doubles when contended (a single server, slowdown [1, 2]): at
    // one request it is the plain lock; under load it saturates at half the plain lock's rate.
    let (lock, plain) = (net(1, vec![1.0, 2.0]), net(1, vec![]));
    assert!(close(mva(&lock, 1).x, mva(&plain, 1).x, 1e-12));
    assert!(close(mva(&lock, 200).x, 0.5, 1e-3), "{}", mva(&lock, 200).x);
    assert!(close(bound(&lock, 200).x, 0.5, 1e-12));
    // The simulation agrees with MVA on a load-dependent network.
    let cpu = net(2, vec![1.0, 1.6]);
    let s = simulate(&cpu, 8, &SimOptions::default()).unwrap();
    let m = mva(&cpu, 8).x;
    assert!(close(s.x, m, 0.05), "sim {} vs MVA {m}", s.x);
    // A slowdown that is not a positive finite number is refused.
    assert!(net(2, vec![1.0, 0.0]).check().is_err());
    assert!(net(2, vec![f64::NAN]).check().is_err());
}

#[test]
fn a_deterministic_lock_queues_less_than_an_exponential_one() {
    use sifter_model::network::{Dist, Network, Path, Station, Step};
    // A lock held 1 µs between 2 µs of thinking on average (a short or a long think, drawn at
    // random, so the requests do not fall into step): at 2 to 4 requests an arrival often
    // finds the lock held, and waits for the rest of a hold — half of one when holds are
    // constant. The calibrated closed-loop model's lock is such a station, solved by the
    // simulation.
    let net = |dist| Network {
        name: "lock".into(),
        stations: vec![Station::new("lock", 1.0, 1, dist)],
        paths: [0.25, 3.75]
            .iter()
            .map(|&t| Path {
                label: format!("think {t}"),
                prob: 0.5,
                steps: vec![Step::Visit(0), Step::Think(t)],
            })
            .collect(),
    };
    let o = SimOptions::default();
    for n in [2, 3, 4] {
        let (det, exp) = (net(Dist::Det), net(Dist::Exp));
        let (sd, se) = (simulate(&det, n, &o).unwrap().x, simulate(&exp, n, &o).unwrap().x);
        // Simulated 0.625 / 0.846 / 0.968 against 0.600 / 0.789 / 0.905.
        assert!(sd > se * 1.02, "n = {n}: deterministic {sd} against exponential {se}");
        // Exponential: MVA is exact, and the simulation agrees with it.
        let me = mva(&exp, n).x;
        assert!(close(me, se, 0.03), "n = {n}: MVA {me} against simulated {se}");
    }
}

#[test]
fn bad_parameters_are_errors() {
    assert!(build("lru", &Params { hit: 1.5, ..Params::default() }).is_err());
    assert!(build("nope", &Params::default()).is_err());
    assert!(build("lru", &Params { overrides: vec![("bogus".into(), 1.0)], ..Params::default() })
        .is_err());
    assert!(build("problru", &Params { q: 2.0, ..Params::default() }).is_err());
}

#[test]
fn figure_trends_of_the_other_policies() {
    let ps = |pol: &str, q: f64| {
        pstar(
            |p| {
                bound(
                    &build(pol, &Params { hit: p, disk_us: 5.0, q, ..Params::default() }).unwrap(),
                    72,
                )
                .x
            },
            2000,
        )
        .0
    };
    // Fig. 7: probabilistic LRU moves p* later as more hits skip the list update, FIFO never peaks.
    let (q0, q5, q9) = (ps("problru", 0.0), ps("problru", 0.5), ps("problru", 0.9));
    assert!(q0 < q5 && q5 < q9, "p* of ProbLRU should grow with q: {q0} {q5} {q9}");
    assert!((q0 - ps("lru", 0.0)).abs() < 0.1, "q = 0 behaves like LRU");
    // Figs. 8/10: SLRU, whose protected-segment delink sits on the hit path, peaks before 1.
    assert!(ps("slru", 0.0) < 1.0);
    // Fig. 14: S3-FIFO, CLOCK, SIEVE and Mobius keep list work off the hit path: no peak.
    for pol in ["s3fifo", "clock", "sieve", "mobius", "fifo"] {
        assert!(ps(pol, 0.0) >= 0.99, "{pol} should never peak");
    }
}

#[test]
fn a_held_core_serves_its_lock_wait_and_hold_too() {
    use sifter_model::network::{Dist, Network, Path, Station, Step};
    // One core and a lock: each request works 1 µs on the core, then holds the lock 1 µs.
    // Without possession the two stations work in parallel (up to 1 request per µs); when the
    // request keeps its core through the lock (an event loop, or a thread spinning on the
    // lock), the core serves 2 µs per request: half the rate.
    let net = |held: bool| {
        let steps = if held {
            vec![
                Step::Acquire(0),
                Step::Work(0, 1.0),
                Step::Work(1, 1.0),
                Step::Release(0),
                Step::Think(0.5),
            ]
        } else {
            vec![Step::Work(0, 1.0), Step::Work(1, 1.0), Step::Think(0.5)]
        };
        Network {
            name: "possession".into(),
            stations: vec![
                Station::new("cpu", 1.0, 1, Dist::Det),
                Station::new("lock", 1.0, 1, Dist::Det),
            ],
            paths: vec![Path { label: "all".into(), prob: 1.0, steps }],
        }
    };
    let o = SimOptions::default();
    let (free, held) =
        (simulate(&net(false), 8, &o).unwrap(), simulate(&net(true), 8, &o).unwrap());
    assert!(close(free.x, 1.0, 0.01), "{}", free.x);
    assert!(close(held.x, 0.5, 0.01), "{}", held.x);
    // The core is busy through the hold: fully utilised, the lock half.
    assert!(close(held.u[0], 1.0, 0.01) && close(held.u[1], 0.5, 0.01), "{:?}", held.u);
    // MVA and the bound do not model possession: they see the plain network.
    assert!(close(mva(&net(true), 8).x, mva(&net(false), 8).x, 1e-12));
    // A path must release what it acquires, once, and acquire before it releases.
    let bad = |steps: Vec<Step>| Network {
        name: "bad".into(),
        stations: vec![Station::new("cpu", 1.0, 1, Dist::Exp)],
        paths: vec![Path { label: "p".into(), prob: 1.0, steps }],
    };
    assert!(bad(vec![Step::Acquire(0), Step::Think(1.0)]).check().is_err());
    assert!(bad(vec![Step::Release(0), Step::Think(1.0)]).check().is_err());
    assert!(bad(vec![Step::Acquire(0), Step::Acquire(0), Step::Release(0)]).check().is_err());
    assert!(bad(vec![Step::Acquire(1), Step::Release(1)]).check().is_err());
    assert!(bad(vec![Step::Acquire(0), Step::Work(0, 1.0), Step::Release(0)]).check().is_ok());
}

#[test]
fn pinned_requests_queue_at_their_own_server() {
    use sifter_model::network::{Dist, Station};
    // Two servers, four requests: pooled, a free server takes any waiting request (one
    // two-server station); pinned, requests 0 and 2 share server 0 and 1 and 3 server 1 (two
    // one-server stations of two requests each), so a server can idle while the other has a
    // queue. Exponential service: MVA is exact for both shapes.
    let net = |servers: u32, pinned: bool| {
        one_station(
            "pinned",
            Station { pinned, ..Station::new("cpu", 1.0, servers, Dist::Exp) },
            1.0,
        )
    };
    let o = SimOptions { requests: 400_000, ..SimOptions::default() };
    let pooled = simulate(&net(2, false), 4, &o).unwrap().x;
    let pinned = simulate(&net(2, true), 4, &o).unwrap().x;
    let (want_pooled, want_pinned) = (mva(&net(2, false), 4).x, 2.0 * mva(&net(1, false), 2).x);
    assert!(want_pinned < want_pooled * 0.97, "{want_pinned} vs {want_pooled}");
    assert!(close(pooled, want_pooled, 0.02), "pooled {pooled} vs {want_pooled}");
    assert!(close(pinned, want_pinned, 0.02), "pinned {pinned} vs {want_pinned}");
}
