//! sifter's experiments as a library: what `sifter bench`, `sifter bench closed-loop` and
//! `sifter lab` compute, with typed results and no printing, so that the CLI and the Python
//! package are two faces of one API.
//!
//! * [`closed_loop`]: N workers against a cache whose misses wait an emulated backend, each
//!   point prefilled to steady state and put beside the calibrated queueing model.
//! * [`report`]: `sifter bench`'s measurement over caches × thread counts × sizes, its table,
//!   CSV and plots.
//! * [`lab`]: the default experiment suite and its self-contained HTML report.
//! * [`memory`]: heap bytes per entry (a counting global allocator) and whether a capacity
//!   fits the machine's memory, asked before a large cache is built.
//! * [`plot`]: the line and bar charts (SVG and PNG) every report uses.
//! * [`table`]: aligned text tables and CSV.
//!
//! Progress goes to a [`sifter_sim::sweep::Observer`] (the simulator's), so one observer type
//! drives the bars of every long-running step.

pub mod closed_loop;
pub mod lab;
#[allow(unsafe_code)]
pub mod memory;
pub mod plot;
pub mod report;
pub mod table;
