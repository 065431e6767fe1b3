//! `memperf curves`: one bandwidth–latency curve per read:write mix, from
//! idle to saturation (the family Mess draws, in minutes). One CPU chases a
//! random cycle beyond the last cache level on huge pages; every other CPU
//! runs traffic in the mix's ratio, a calibrated pause after each block
//! setting the rate. The pauses are found per mix ([`search`]); the chosen
//! points are measured through `timing::schedule`. Bandwidth is bus traffic
//! (write-allocate and the chaser's lines counted), and two second looks
//! check the idle and saturated ends in the same run. The method, step by
//! step: docs/methods/curves.md.

pub mod analysis;
pub mod measure;
pub mod options;
pub mod params;
pub mod search;

pub use options::Options;
pub use params::{preset_mixes, Params};

use super::chase_under_load::{self, Chaser};
use super::stream_arrays::Array;
use super::{Bench, Experiment, Preset};
use crate::counters::memory_traffic::MemoryTraffic;
use crate::error::Result;
use crate::memory::{Buffer, PagePolicy};
pub use crate::model::outcome::curves::*;
use crate::timing::Team;

pub struct Curves;

impl Experiment for Curves {
    const NAME: &'static str = "curves";
    const SHARE: f64 = 2.6;
    type Params = Params;
    type Outcome = Outcome;

    fn preset(preset: Preset, machine: &crate::machine::Fingerprint) -> Params {
        Params::preset(preset, machine)
    }
    fn needs(p: &Params) -> Result<crate::experiments::Needs> {
        params::check(p)?;
        Ok(p.load.needs())
    }
    fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
        run(p, ctx)
    }
}

fn run(p: &Params, ctx: &Bench) -> Result<Outcome> {
    params::check(p)?;
    let cpus = crate::timing::team::allowed_cpus().len();
    let mut buffer = Buffer::new(p.load.pages, p.load.chase_bytes)?;
    if cpus < 2 {
        chase_under_load::warn_one_cpu(ctx, "curves", "every curve", "not measured — curves need 2 CPUs");
        return Ok(not_measured(p, &buffer, cpus));
    }
    let team = Team::new(cpus)?;
    let array = Array::new(PagePolicy::Small, p.traffic_bytes, 2, &team, 1, ctx.clock)?;
    // SAFETY: the buffer outlives the rig and its chaser.
    let chaser = unsafe { Chaser::over(&buffer, p.load.seed) };
    let load = chase_under_load::Rig::new("curves", ctx, team, chaser);
    let devices = std::path::Path::new("/sys/bus/event_source/devices");
    let counted = match MemoryTraffic::open(devices) {
        Ok(m) => {
            let said = format!("counted by {} (cas_count_read + cas_count_write), beside each point", m.pmus.join(", "));
            *load.memory.lock().unwrap_or_else(|e| e.into_inner()) = Some(m);
            said
        }
        Err(why) => why,
    };
    let rig = measure::Rig { load, array, p };
    let curves = measure::all(&rig)?;
    let looks = measure::second_looks(&rig, &curves)?;
    buffer.read_back();
    rig.load.finish(buffer.backing());
    Ok(outcome(&rig, buffer.backing().clone(), counted, curves, looks))
}


/// The outcome of a run that measured no curve.
fn not_measured(p: &Params, buffer: &Buffer, cpus: usize) -> Outcome {
    Outcome {
        chaser_cpu: crate::timing::team::allowed_cpus().first().copied().unwrap_or(0),
        traffic_cpus: Vec::new(),
        not_measured: Some(format!("not measured — curves need 2 CPUs, and this process may use {cpus}")),
        chase_bytes: p.load.chase_bytes.0,
        chase_backing: buffer.backing().clone(),
        traffic_bytes: p.traffic_bytes.0,
        block_bytes: p.load.block_bytes.0,
        traffic_isa: String::new(),
        pause_ns_per_iteration: 0.0,
        counted_traffic: COUNTED.into(),
        curves: Vec::new(),
        writes_cost: Vec::new(),
        consistency: Vec::new(),
        host_read_bytes_per_s: None,
        seed: p.load.seed,
        valid: true,
    }
}

/// What the memory controllers counted where no uncore PMU exists.
const COUNTED: &str = "not measured — no uncore PMU";

fn outcome(
    rig: &measure::Rig,
    chase_backing: crate::memory::Backing,
    counted_traffic: String,
    curves: Vec<Curve>,
    looks: measure::SecondLooks,
) -> Outcome {
    let isa = crate::kernels::stream_kernel(crate::kernels::StreamShape::Simd, None).map(|k| k.1.isa).unwrap_or_default();
    Outcome {
        chaser_cpu: rig.load.team.cpus()[0],
        traffic_cpus: rig.load.team.cpus()[1..].to_vec(),
        not_measured: None,
        chase_bytes: rig.p.load.chase_bytes.0,
        chase_backing,
        traffic_bytes: rig.p.traffic_bytes.0,
        block_bytes: rig.p.load.block_bytes.0,
        traffic_isa: isa,
        pause_ns_per_iteration: rig.load.pause_ns_per_iteration,
        counted_traffic,
        writes_cost: analysis::writes_cost(&curves),
        valid: curves.iter().all(|c| c.valid),
        curves,
        consistency: looks.checks,
        host_read_bytes_per_s: looks.host_read_bytes_per_s,
        seed: rig.p.load.seed,
    }
}

impl crate::model::Redraw for Outcome {
    /// `report --reanalyze`: each curve's ends, knee, fold-backs and gap,
    /// and what writes cost, drawn again from the stored points.
    fn reanalyse(&mut self, _: &crate::machine::Fingerprint, _: Option<f64>) -> Vec<&'static str> {
        for c in self.curves.iter_mut() {
            *c = analysis::curve(c.mix, std::mem::take(&mut c.points));
        }
        self.writes_cost = analysis::writes_cost(&self.curves);
        vec!["curves", "writes_cost"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Redraw;
    use analysis::tests::point;

    /// `report --reanalyze` draws the knee, the ends and writes' cost again
    /// from the stored points: a knee edited away comes back.
    #[test]
    fn reanalysis_redraws_each_curve_from_its_points() {
        let reads = vec![point(None, 100.0, 1.0), point(Some(800), 120.0, 5.0), point(Some(0), 300.0, 15.0)];
        let writes = vec![point(None, 100.0, 1.0), point(Some(0), 150.0, 12.0)];
        let backing = crate::memory::Backing {
            requested: PagePolicy::Thp,
            size_bytes: crate::units::Bytes(64 << 20),
            page_size_bytes: None,
            huge_bytes: None,
            huge_fraction: None,
            in_order_fraction: None,
                pages_per_2mib_block: None,
            first_touch_shuffled: false,
        };
        let mut o = Outcome {
            chaser_cpu: 0,
            traffic_cpus: vec![1],
            not_measured: None,
            chase_bytes: 64 << 20,
            chase_backing: backing,
            traffic_bytes: 64 << 20,
            block_bytes: 65536,
            traffic_isa: "avx2".into(),
            pause_ns_per_iteration: 0.3,
            counted_traffic: COUNTED.into(),
            curves: vec![
                analysis::curve(Mix::new(1, 0, false), reads),
                analysis::curve(Mix::new(0, 1, true), writes),
            ],
            writes_cost: Vec::new(),
            consistency: Vec::new(),
            host_read_bytes_per_s: None,
            seed: 1,
            valid: true,
        };
        let knee = o.curves[0].knee.clone();
        assert!(matches!(knee, Knee::Found { .. }));
        o.curves[0].knee = Knee::NoneBelowSaturation { highest_latency_ratio: 0.0 };
        o.curves[0].saturated_bytes_per_s = 0.0;
        assert_eq!(o.reanalyse(&crate::machine::collect(), None), ["curves", "writes_cost"]);
        assert_eq!(o.curves[0].knee, knee);
        assert_eq!(o.curves[0].saturated_bytes_per_s, 15e9);
        assert_eq!(o.writes_cost[0].saturated_fraction, 0.8);
    }

    #[test]
    fn the_presets_hold_the_mixes_the_issue_names() {
        let names = |p: Preset| preset_mixes(p).iter().map(|m| m.to_string()).collect::<Vec<_>>();
        assert_eq!(names(Preset::Quick), ["100:0", "3:1", "1:1", "0:100nt"]);
        let full = names(Preset::Full);
        assert_eq!(full.len(), 14);
        for m in ["100:0", "90:10", "50:50", "0:100", "2:1", "3:1", "0:100nt"] {
            assert!(full.contains(&m.to_string()), "{m} in {full:?}");
        }
    }
}
