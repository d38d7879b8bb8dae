//! `sifter lab`: the CLI's face of [`sifter_lab::lab`] (progress bars and steps on stderr,
//! tables and the findings on stdout).

use crate::sim::{Bars, STOP};
use anyhow::Result;
use sifter_lab::lab::LabOptions;
use std::path::PathBuf;

/// Arguments of `sifter lab`.
#[derive(clap::Args, Debug)]
pub struct LabArgs {
    /// Output directory.
    #[arg(short, long, default_value = "lab-report")]
    pub out: PathBuf,
    /// A smaller, faster suite (about two minutes on two cores, most of it the closed loop of
    /// every policy at two target hit ratios; the full suite takes about 13 minutes).
    #[arg(long)]
    pub quick: bool,
    /// Also simulate these real traces (format detected; use `sifter sim` for explicit formats).
    #[arg(long)]
    pub trace: Vec<String>,
    /// No progress bars.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `sifter lab`.
pub fn run(a: LabArgs) -> Result<()> {
    let opts = LabOptions {
        out: a.out.clone(),
        quick: a.quick,
        traces: a.trace.clone(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
    };
    let outcome = sifter_lab::lab::run(&opts, &Bars::new(a.quiet), &STOP)?;
    eprintln!(
        "\nwrote {0}/index.html, {0}/results.json and {0}/sim.csv in {1:.1} s",
        a.out.display(),
        outcome.seconds
    );
    // The answer last, so the final screen of a run is it.
    println!("\n{}", outcome.findings);
    Ok(())
}
