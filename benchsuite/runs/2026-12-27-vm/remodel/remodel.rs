// SCRATCH: re-solve dumped closed-loop slices with the current model.
use serde_json::Value;
use sifter_lab::closed_loop::{calibrated_network, Backend, Calibration, Costs, Workers};
use sifter_model::sim::{simulate, SimOptions};
use std::collections::BTreeMap;

fn costs(v: &Value) -> Costs {
    Costs { hit_us: v["hit_us"].as_f64().unwrap(), miss_us: v["miss_us"].as_f64().unwrap() }
}
fn cal(v: &Value) -> Calibration {
    Calibration { one: costs(&v["one"]), threads: v["threads"].as_u64().unwrap() as usize, busy: costs(&v["busy"]) }
}
fn main() {
    let mut pts: BTreeMap<String, (f64, f64, f64, f64, f64)> = BTreeMap::new();
    for f in std::env::args().skip(1) {
        for l in std::fs::read_to_string(&f).unwrap().lines() {
            let v: Value = serde_json::from_str(l).unwrap();
            let name = v["name"].as_str().unwrap();
            let c = cal(&v["cal"]);
            let b = cal(&v["base"]);
            let workers = if v["loops"].as_bool().unwrap() { Workers::Loops } else { Workers::Threads };
            let mpl = v["mpl"].as_u64().unwrap() as usize;
            let net = calibrated_network(
                name, &c, &b, v["hit"].as_f64().unwrap(),
                Backend { wait_us: v["wait_us"].as_f64().unwrap(), spin: v["spin"].as_bool().unwrap(), overhead_us: v["over"].as_f64().unwrap() },
                workers, v["cores"].as_u64().unwrap() as u32, mpl);
            let o = SimOptions { warmup: 20_000, requests: 200_000, batches: 20, seed: 1 };
            let s = simulate(&net, mpl as u32, &o).unwrap();
            let key = format!("{f} {name:>12} mpl{mpl:<3} {:>5}us spin={} size={:.5}", v["backend_us"].as_f64().unwrap(), v["spin"], v["size"].as_f64().unwrap());
            eprintln!("SLICE\t{key}\t{}\t{}", v["x"].as_f64().unwrap(), s.x);
            let e = pts.entry(key).or_default();
            e.0 += v["x"].as_f64().unwrap();
            e.1 += s.x;
            e.2 += v["busy"].as_f64().unwrap_or(f64::NAN);
            e.3 += s.u[0];
            e.4 += 1.0;
        }
    }
    let mut errs = Vec::new();
    for (k, (x, m, b, mb, n)) in pts {
        let err = m / x - 1.0;
        errs.push(err.abs());
        println!("{k} hit? meas {:.3} model {:.3} err {:+.1}% busy {:.3}/{:.3}", x / n, m / n, err * 100.0, b / n, mb / n);
    }
    let within = errs.iter().filter(|e| **e <= 0.1).count();
    println!("mean |err| {:.1}%, max {:.1}%, {} of {} within 10%", 100.0 * errs.iter().sum::<f64>() / errs.len() as f64, 100.0 * errs.iter().cloned().fold(0.0, f64::max), within, errs.len());
}
