//! `sifter lab`: the CLI's face of [`sifter_lab::lab`] (progress bars and steps on stderr,
//! tables and the findings on stdout).

use crate::sim::{Bars, STOP};
use anyhow::Result;
use sifter_lab::lab::{LabObserver, LabOptions};
use sifter_sim::sweep::{Notice, Observer};
use std::path::PathBuf;

/// Arguments of `sifter lab`.
#[derive(clap::Args, Debug)]
pub struct LabArgs {
    /// Output directory.
    #[arg(short, long, default_value = "lab-report")]
    pub out: PathBuf,
    /// A smaller, faster suite (a few seconds).
    #[arg(long)]
    pub quick: bool,
    /// Also simulate these real traces (format detected; use `sifter sim` for explicit formats).
    #[arg(long)]
    pub trace: Vec<String>,
    /// No progress bars.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Progress bars from [`Bars`]; steps to stderr, tables to stdout.
struct Terminal(Bars);

impl Observer for Terminal {
    fn notice(&self, n: &Notice) {
        self.0.notice(n)
    }
    fn begin(&self, label: &str, total: u64) {
        self.0.begin(label, total)
    }
    fn relabel(&self, label: &str) {
        self.0.relabel(label)
    }
    fn position(&self, done: u64) {
        self.0.position(done)
    }
    fn advance(&self, n: u64) {
        self.0.advance(n)
    }
    fn end(&self) {
        self.0.end()
    }
}

impl LabObserver for Terminal {
    fn step(&self, what: &str) {
        eprintln!("{what}");
    }
    fn table(&self, text: &str) {
        println!("{text}");
    }
}

/// `sifter lab`.
pub fn run(a: LabArgs) -> Result<()> {
    let opts = LabOptions {
        out: a.out.clone(),
        quick: a.quick,
        traces: a.trace.clone(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
    };
    let outcome = sifter_lab::lab::run(&opts, &Terminal(Bars::new(a.quiet)), &STOP)?;
    eprintln!(
        "\nwrote {0}/index.html, {0}/results.json and {0}/sim.csv in {1:.1} s",
        a.out.display(),
        outcome.seconds
    );
    // The answer last, so the final screen of a run is it.
    println!("\n{}", outcome.findings);
    Ok(())
}
