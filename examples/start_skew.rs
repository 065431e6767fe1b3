//! How far apart the threads of a run start: a futex barrier
//! (`std::sync::Barrier`, what memperf's team used) against the spinning
//! [`SpinBarrier`] it uses now. Two threads pinned to the first two CPUs
//! this process may use meet at the barrier, arriving 200 µs apart, and
//! read CLOCK_MONOTONIC as they leave; the skew is the difference.
//!
//!   cargo run --release --example start_skew [RUNS]   (default 400)

use memperf::timing::team::{allowed_cpus, pin_current_thread};
use memperf::timing::wait::SpinBarrier;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(400).max(10);
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        eprintln!("start_skew needs two CPUs; this process may use {}", cpus.len());
        std::process::exit(2);
    }
    for spinning in [false, true] {
        let mut skews: Vec<u128> = (0..runs).map(|_| one_run(spinning, [cpus[0], cpus[1]])).collect();
        skews.sort_unstable();
        let q = |f: f64| skews[((runs - 1) as f64 * f) as usize];
        println!(
            "{:7} barrier, {runs} runs: start skew median {} ns, p90 {} ns, max {} ns",
            if spinning { "spin" } else { "futex" },
            q(0.5),
            q(0.9),
            q(1.0)
        );
    }
}

/// The start skew of one two-thread run, in ns.
fn one_run(spinning: bool, cpus: [usize; 2]) -> u128 {
    let futex = Arc::new(Barrier::new(2));
    let spin = Arc::new(SpinBarrier::new(2));
    let origin = Instant::now();
    let starts: Vec<u128> = cpus
        .into_iter()
        .enumerate()
        .map(|(i, cpu)| {
            let (futex, spin) = (Arc::clone(&futex), Arc::clone(&spin));
            std::thread::spawn(move || {
                let _ = pin_current_thread(cpu);
                std::thread::sleep(Duration::from_micros(200 * i as u64));
                if spinning {
                    spin.wait()
                } else {
                    futex.wait();
                }
                origin.elapsed().as_nanos()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().expect("a skew thread"))
        .collect();
    starts[0].abs_diff(starts[1])
}
