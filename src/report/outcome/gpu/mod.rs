//! `gpu` as text: each device in a line or two, its copies and kernels as
//! tables, triad against its working set, or the one line saying why
//! nothing was measured; what pinning host memory, the link's width and
//! the kernels' launch shape are worth, as advice. The host link:
//! [`link`]; the latency ladder, the TLB chase and the L2's spread:
//! [`latency`].

mod latency;
mod link;

use crate::model::document::Document;
use crate::model::outcome::gpu::{l2_plateau, Device, Direction, HostMemory, Outcome};
use crate::report::headlines::{headline, Headline, Unit};
use crate::report::table::{gbps, Table};
use crate::units::Bytes;

/// A device in a line, and its PCIe link in a second.
pub(super) fn device_lines(d: &Device, version: Option<u32>) -> String {
    let (major, minor) = d.compute_capability;
    let mut out = format!(
        "GPU {}: {} (compute {major}.{minor}), {} SMs, L2 {}, memory {}",
        d.index,
        d.name,
        d.sms,
        Bytes(d.l2_bytes),
        Bytes(d.memory_bytes)
    );
    if let (Some(khz), Some(bits), Some(peak)) = (d.memory_clock_khz, d.memory_bus_bits, d.memory_peak_bytes_per_s) {
        out += &format!(" at {:.0} MHz over {bits} bits ({} GB/s peak, the vendor's figure)", khz as f64 / 1e3, gbps(peak));
    }
    if let Some(e) = d.ecc {
        out += if e { ", ECC on" } else { ", ECC off" };
    }
    if let Some(v) = version {
        out += &format!(", driver {}.{}", v / 1000, v % 1000 / 10);
    }
    out.push('\n');
    if let Some(l) = &d.link {
        let speed = l.speed.as_deref().unwrap_or("speed unknown");
        let width = l.width.map_or_else(|| "width unknown".into(), |w| format!("x{w}"));
        let max = l.max_width.map_or(String::new(), |m| format!(" of x{m}"));
        let node = l.numa_node.map_or(String::new(), |n| format!("; host memory nearest on NUMA node {n}"));
        out += &format!("  PCIe {}: {speed}, {width}{max}{node}\n", l.address);
    }
    out
}

fn gpu_text(o: &Outcome) -> String {
    if let Some(why) = &o.not_measured {
        return format!("gpu: {why}\n");
    }
    let mut out: String = o.devices.iter().map(|d| device_lines(d, o.driver_version)).collect();
    out += &link::text(o);
    out += &kernels_text(o);
    out.extend(o.latency.iter().map(latency::text));
    out.extend(o.loaded.iter().map(latency::curve_text));
    out
}

/// The driver's own device-to-device copy of `device`, bytes per second.
fn device_copy(o: &Outcome, device: usize) -> Option<f64> {
    link::find(o, device, Direction::DeviceToDevice, HostMemory::None).map(|c| c.bytes_per_s.median)
}

/// The kernels' table (each beside the driver's copy and the vendor's
/// peak), triad against its working set, or why the kernels did not run.
fn kernels_text(o: &Outcome) -> String {
    let mut out = String::new();
    if let Some(why) = &o.kernels_not_measured {
        out += &format!("kernels: not measured — {why}\n");
    }
    if o.kernels.is_empty() {
        return out;
    }
    let mut t = Table::new(["GPU", "kernel", "array", "threads × blocks", "GB/s", "min", "max", "× copy", "of peak", "check"]);
    for k in &o.kernels {
        let peak = o.devices.iter().find(|d| d.index == k.device).and_then(|d| d.memory_peak_bytes_per_s);
        let ratio = |of: Option<f64>, f: &dyn Fn(f64) -> String| of.map_or("-".into(), |x| f(k.bytes_per_s.median / x));
        t.row([
            k.device.to_string(),
            k.kernel.clone(),
            Bytes(k.elements * 8).to_string(),
            format!("{} × {}", k.block, k.grid),
            gbps(k.bytes_per_s.median),
            gbps(k.bytes_per_s.min),
            gbps(k.bytes_per_s.max),
            ratio(device_copy(o, k.device), &|r| format!("×{r:.2}")),
            ratio(peak, &|r| format!("{:.0}%", 100.0 * r)),
            if k.valid { "ok" } else { "FAILED" }.into(),
        ]);
    }
    out += "memperf's kernels over device memory, each in its best of the block and grid sizes tried \
            (BabelStream's bytes; × copy: over the driver's device-to-device copy):\n";
    out += &t.render();
    if o.working_set.is_empty() {
        return out;
    }
    let mut w = Table::new(["GPU", "working set", "GB/s", "min", "max"]);
    for p in &o.working_set {
        w.row([
            p.device.to_string(),
            Bytes(p.bytes).to_string(),
            gbps(p.bytes_per_s.median),
            gbps(p.bytes_per_s.min),
            gbps(p.bytes_per_s.max),
        ]);
    }
    out += "triad against its working set (its three arrays' bytes):\n";
    out += &w.render();
    for d in &o.devices {
        if let Some((bytes, rate)) = l2_plateau(&o.working_set, d.index) {
            out += &format!("  GPU {}: L2-resident up to {} ({} GB/s); the L2 holds {}\n", d.index, Bytes(bytes), gbps(rate), Bytes(d.l2_bytes));
        }
    }
    out
}

/// The link's advice ([`link::advice`]), the kernels', and where the
/// link runs narrower than it can.
fn gpu_advice(o: &Outcome) -> Vec<String> {
    let mut out = Vec::new();
    for d in &o.devices {
        out.extend(link::advice(o, d));
        out.extend(kernel_advice(o, d));
        if let Some(l) = d.link.as_ref().filter(|l| l.width.zip(l.max_width).is_some_and(|(w, m)| w < m)) {
            out.push(format!(
                "GPU {}: its PCIe link runs at x{} of the x{} it can: seat it in a full-width slot, or check the \
                 slot's and the BIOS's link settings",
                d.index,
                l.width.unwrap_or(0),
                l.max_width.unwrap_or(0)
            ));
        }
    }
    out
}

/// Device memory's measured ceiling (the fastest kernel or the driver's
/// copy) and the launch shape that reaches it; where the working-set
/// curve shows the L2, the size to tile under.
fn kernel_advice(o: &Outcome, d: &Device) -> Vec<String> {
    let mut out = Vec::new();
    let kernels: Vec<_> = o.kernels.iter().filter(|k| k.device == d.index && k.valid).collect();
    let Some(triad) = kernels.iter().find(|k| k.kernel == "triad") else {
        return out;
    };
    let best_kernel = kernels.iter().max_by(|a, b| a.bytes_per_s.median.total_cmp(&b.bytes_per_s.median));
    let copy = device_copy(o, d.index).unwrap_or(0.0);
    let (ceiling, by) = match best_kernel {
        Some(k) if k.bytes_per_s.median >= copy => (k.bytes_per_s.median, format!("{} in {} × {}", k.kernel, k.block, k.grid)),
        _ => (copy, "the driver's device-to-device copy".to_string()),
    };
    let peak = d.memory_peak_bytes_per_s.map_or(String::new(), |p| format!(", {:.0}% of the vendor's peak", 100.0 * ceiling / p));
    out.push(format!(
        "GPU {}: device memory's measured ceiling is {} GB/s ({by}{peak}); triad reaches {:.0}% of it with {} threads \
         × {} blocks ({:.1} blocks an SM): launch streaming kernels in that shape",
        d.index,
        gbps(ceiling),
        100.0 * triad.bytes_per_s.median / ceiling,
        triad.block,
        triad.grid,
        triad.grid as f64 / d.sms.max(1) as f64
    ));
    if let Some((bytes, rate)) = l2_plateau(&o.working_set, d.index) {
        let memory = o.working_set.iter().filter(|w| w.device == d.index).max_by_key(|w| w.bytes).map_or(rate, |w| w.bytes_per_s.median);
        out.push(format!(
            "GPU {}: working sets up to {} stay in the L2 at ×{:.1} memory's rate ({} against {} GB/s): \
             tile what a kernel sweeps repeatedly to under {}",
            d.index,
            Bytes(bytes),
            rate / memory,
            gbps(rate),
            gbps(memory),
            Bytes(bytes)
        ));
    }
    out
}

/// Each copy case's and each kernel's bytes per second, one headline
/// each, and each small copy's time.
fn gpu_metrics(o: &Outcome) -> Vec<Headline> {
    let copies = link::metrics(o);
    let kernels = o.kernels.iter().map(|k| {
        let labels = [("device", k.device.to_string()), ("kernel", k.kernel.clone())];
        let samples: Vec<f64> = k.samples_bytes_per_s.iter().map(|x| x / 1e9).collect();
        let name = format!("gpu {} kernel {}", k.device, k.kernel);
        headline("gpu.kernel", &labels, name, Unit::GigabytesPerSecond, samples, k.bytes_per_s.median / 1e9, true)
    });
    copies.into_iter().chain(kernels).chain(latency::metrics(o)).collect()
}

impl super::Render for Outcome {
    fn text(&self, _doc: &Document) -> String {
        gpu_text(self)
    }
    /// A handful of paths: a table, not a chart.
    fn plots(&self, _doc: &Document) -> crate::error::Result<Vec<crate::report::plot::Plot>> {
        Ok(Vec::new())
    }
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        gpu_metrics(self)
    }
    fn advice(&self, _doc: &Document) -> Vec<String> {
        let mut out = gpu_advice(self);
        out.extend(latency::advice(self));
        out
    }
    fn nothing_measured(&self) -> Option<String> {
        self.not_measured.clone()
    }
    fn advice_row(&self, advice: &str) -> Option<String> {
        if advice.contains("pageable") {
            Some("pageable".into())
        } else if advice.contains("gather small host-to-device transfers") {
            Some("µs each".into())
        } else if advice.contains("triad reaches") {
            Some("triad".into())
        } else if let Some(i) = advice.find(" pages of ").filter(|_| advice.contains("miss the GPU's TLB")) {
            advice[..i].rsplit('(').next().map(|pages| format!("past {pages} pages"))
        } else if advice.contains("stays near idle") {
            Some("latency stays within".into())
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::outcome::gpu::{Engine, KernelRate, Link, SmallCopy, Transfer, WorkingSetRate};
    use crate::timing::Summary;

    fn transfer(direction: Direction, host: HostMemory, gbs: f64) -> Transfer {
        Transfer {
            device: 0,
            direction,
            host,
            engine: Engine::CopyEngine,
            both_ways: false,
            gated: host != HostMemory::Pageable,
            bytes: 1 << 29,
            copies_per_sample: 4,
            samples_bytes_per_s: vec![gbs * 1e9],
            bytes_per_s: Summary::of(&[gbs * 1e9]).unwrap(),
            valid: true,
        }
    }

    fn outcome(pageable_gbs: f64, width: u32) -> Outcome {
        let link = Link {
            address: "0000:41:00.0".into(),
            speed: Some("32.0 GT/s PCIe".into()),
            max_speed: None,
            width: Some(width),
            max_width: Some(16),
            numa_node: Some(1),
        };
        let device = Device {
            index: 0,
            name: "NVIDIA H200".into(),
            compute_capability: (9, 0),
            sms: 132,
            l2_bytes: 50 << 20,
            memory_bytes: 150_754_820_096,
            memory_clock_khz: Some(3_201_000),
            memory_bus_bits: Some(6144),
            memory_peak_bytes_per_s: Some(4.917e12),
            sm_clock_khz: None,
            ecc: Some(true),
            link: Some(link),
        };
        Outcome {
            driver_version: Some(13000),
            devices: vec![device],
            copies: vec![
                transfer(Direction::HostToDevice, HostMemory::Pinned, 50.0),
                transfer(Direction::HostToDevice, HostMemory::Pageable, pageable_gbs),
                transfer(Direction::DeviceToDevice, HostMemory::None, 4000.0),
            ],
            ..Outcome::empty()
        }
    }

    /// Pageable copies at 38% of pinned, on a link at x8 of x16: both said,
    /// with the figures; at 90% and x16, nothing.
    #[test]
    fn pinning_and_the_links_width_are_advised_from_the_figures() {
        let advice = gpu_advice(&outcome(19.0, 8));
        assert_eq!(advice.len(), 2, "{advice:?}");
        assert!(advice[0].contains("pageable host-to-device copies reach 38% of pinned (19.00 against 50.00 GB/s)"));
        assert!(advice[1].contains("x8 of the x16"), "{}", advice[1]);
        assert!(gpu_advice(&outcome(45.0, 16)).is_empty());
    }

    #[test]
    fn the_text_names_the_part_its_link_and_each_path() {
        let text = gpu_text(&outcome(19.0, 16));
        assert!(text.contains("NVIDIA H200 (compute 9.0), 132 SMs, L2 50MiB"), "{text}");
        assert!(text.contains("PCIe 0000:41:00.0: 32.0 GT/s PCIe, x16 of x16; host memory nearest on NUMA node 1"));
        assert!(text.contains("device-to-device"), "{text}");
        let none = Outcome { not_measured: Some("not measured — no GPU: x".into()), ..outcome(1.0, 16) };
        assert_eq!(gpu_text(&none), "gpu: not measured — no GPU: x\n");
    }

    fn kernel(name: &str, gbs: f64, block: u32, grid: u32) -> KernelRate {
        KernelRate {
            device: 0,
            kernel: name.into(),
            doubles_per_element: 3,
            elements: 25 << 20,
            block,
            grid,
            launches_per_sample: 8,
            samples_bytes_per_s: vec![gbs * 1e9],
            bytes_per_s: Summary::of(&[gbs * 1e9]).unwrap(),
            valid: true,
        }
    }

    fn with_kernels() -> Outcome {
        let point = |bytes: u64, gbs: f64| WorkingSetRate {
            device: 0,
            bytes,
            block: 512,
            grid: 1056,
            launches_per_sample: 4,
            samples_bytes_per_s: vec![gbs * 1e9],
            bytes_per_s: Summary::of(&[gbs * 1e9]).unwrap(),
        };
        Outcome {
            kernels: vec![kernel("copy", 3900.0, 1024, 264), kernel("triad", 3600.0, 512, 1056), kernel("write", 4100.0, 256, 528)],
            working_set: vec![point(3 << 20, 9000.0), point(24 << 20, 8500.0), point(96 << 20, 4000.0), point(600 << 20, 3600.0)],
            ..outcome(45.0, 16)
        }
    }

    /// The ceiling is the fastest of the kernels and the driver's copy;
    /// triad's share of it and its launch shape, and the L2's reach from
    /// the working-set curve, are advised with their figures.
    #[test]
    fn the_ceiling_triads_shape_and_the_l2s_reach_are_advised() {
        let advice = gpu_advice(&with_kernels());
        assert_eq!(advice.len(), 2, "{advice:?}");
        assert!(advice[0].contains("ceiling is 4100.00 GB/s (write in 256 × 528, 83% of the vendor's peak)"), "{}", advice[0]);
        assert!(advice[0].contains("triad reaches 88% of it with 512 threads × 1056 blocks (8.0 blocks an SM)"), "{}", advice[0]);
        assert!(advice[1].contains("working sets up to 24MiB stay in the L2 at ×2.4 memory's rate"), "{}", advice[1]);
        // Below the driver's copy, the copy is the ceiling.
        let slow = Outcome { kernels: vec![kernel("triad", 3000.0, 512, 1056)], ..with_kernels() };
        assert!(gpu_advice(&slow)[0].contains("the driver's device-to-device copy"), "{:?}", gpu_advice(&slow));
    }

    #[test]
    fn the_kernels_table_sets_each_beside_the_copy_and_the_peak() {
        let text = gpu_text(&with_kernels());
        assert!(text.contains("memperf's kernels over device memory"), "{text}");
        assert!(text.contains("×0.90"), "triad over the 4,000 GB/s copy: {text}");
        assert!(text.contains("GPU 0: L2-resident up to 24MiB"), "{text}");
        let without = Outcome { kernels_not_measured: Some("GPU 0: NVRTC failed: x".into()), ..outcome(45.0, 16) };
        assert!(gpu_text(&without).contains("kernels: not measured — GPU 0: NVRTC failed: x"));
    }

    fn small(bytes: u64, s: f64) -> SmallCopy {
        SmallCopy {
            device: 0,
            direction: Direction::HostToDevice,
            bytes,
            copies_per_sample: 256,
            samples_s: vec![s],
            seconds: Summary::of(&[s]).unwrap(),
            gated: true,
            valid: true,
        }
    }

    /// The copy engine's pinned paths, the SMs' (faster to the device),
    /// both ways at once, and small copies of 8 B and 1 MiB.
    fn with_link() -> Outcome {
        use {Direction::*, HostMemory::*};
        let mut o = outcome(45.0, 16);
        let both = |dir, gbs| Transfer { both_ways: true, ..transfer(dir, Pinned, gbs) };
        o.copies.extend([
            transfer(DeviceToHost, Pinned, 52.0),
            Transfer { engine: Engine::Sm, ..transfer(HostToDevice, Pinned, 53.0) },
            both(HostToDevice, 48.0),
            both(DeviceToHost, 46.0),
        ]);
        o.small_copies = vec![small(8, 2.1e-6), small(1 << 20, 23e-6)];
        o
    }

    /// Each one-way path against the best of its direction, both ways at
    /// once against one way's faster, and each small copy's time.
    #[test]
    fn the_link_is_set_against_its_best_path_and_both_ways() {
        let text = gpu_text(&with_link());
        let row = |what: &str| text.lines().find(|l| l.contains(what)).unwrap_or_else(|| panic!("{what}: {text}")).to_string();
        assert!(row("copy engine  pinned").contains("94%"), "50 of the SMs' 53 GB/s: {text}");
        assert!(row("  SMs  ").contains("100%") && row("  SMs  ").contains("gated"), "{text}");
        assert!(row("pageable").contains("85%") && row("pageable").contains("as issued"), "{text}");
        assert!(text.contains("both ways at once by the copy engine: 48.00 + 46.00 = 94.00 GB/s, ×1.81 one way's faster"), "{text}");
        assert!(row("  1MiB  ").contains("23.00") && row("  8B  ").contains("2.10"), "{text}");
    }

    /// A copy of 8 B costing 2.1 µs against a link of 50 GB/s: copies
    /// reach half its rate only from 105 kB (103 KiB), and the advice says so; with
    /// no small copies, nothing.
    #[test]
    fn small_copies_advise_batching_below_the_half_rate_size() {
        let advice = gpu_advice(&with_link());
        let batching = advice.iter().find(|a| a.contains("gather small")).expect("advised");
        assert!(batching.contains("a copy of 8B to the device costs 2.1 µs"), "{batching}");
        assert!(batching.contains(&format!("copies of {} or more reach half the link's 50.00 GB/s", Bytes(103 << 10))), "{batching}");
        assert!(!gpu_advice(&outcome(45.0, 16)).iter().any(|a| a.contains("gather small")));
    }

    #[test]
    fn each_path_is_a_headline() {
        let m = gpu_metrics(&outcome(19.0, 16));
        assert_eq!(m.len(), 3);
        assert!(m.iter().all(|h| h.id == "gpu.copy" && h.higher_is_better));
        assert_eq!(m[1].value, 19.0);
        let m = gpu_metrics(&with_link());
        let small: Vec<_> = m.iter().filter(|h| h.id == "gpu.small_copy").collect();
        assert_eq!((m.len(), small.len()), (9, 2));
        assert!(!small[0].higher_is_better && (small[0].value - 2100.0).abs() < 1e-6, "{:?}", small[0]);
    }
}
