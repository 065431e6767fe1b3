//! `gpu` as text: each device in a line or two, its copies as a table,
//! or the one line saying why nothing was measured; what pinning host
//! memory and the link's width are worth, as advice.

use crate::model::document::Document;
use crate::model::outcome::gpu::{Device, Direction, HostMemory, Outcome, Transfer};
use crate::report::headlines::{headline, Headline, Unit};
use crate::report::table::{gbps, Table};
use crate::units::Bytes;

/// Below this share of pinned memory's rate, pageable copies are worth pinning.
const PIN_WORTH: f64 = 0.8;

fn device_lines(d: &Device, version: Option<u32>) -> String {
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
    let mut t = Table::new(["GPU", "copy", "host memory", "size", "GB/s", "min", "max", "check"]);
    for c in &o.copies {
        t.row([
            c.device.to_string(),
            c.direction.name().into(),
            c.host.name().into(),
            Bytes(c.bytes).to_string(),
            gbps(c.bytes_per_s.median),
            gbps(c.bytes_per_s.min),
            gbps(c.bytes_per_s.max),
            if c.valid { "ok" } else { "FAILED" }.into(),
        ]);
    }
    out += "the driver's copies, timed by its events (device-to-device: bytes read and written):\n";
    out += &t.render();
    out
}

fn find(o: &Outcome, device: usize, direction: Direction, host: HostMemory) -> Option<&Transfer> {
    o.copies.iter().find(|c| c.device == device && c.direction == direction && c.host == host)
}

/// Where pageable copies reach less than [`PIN_WORTH`] of pinned ones, by
/// how much; where the link runs narrower than it can.
fn gpu_advice(o: &Outcome) -> Vec<String> {
    let mut out = Vec::new();
    for d in &o.devices {
        for dir in [Direction::HostToDevice, Direction::DeviceToHost] {
            let (Some(pinned), Some(pageable)) =
                (find(o, d.index, dir, HostMemory::Pinned), find(o, d.index, dir, HostMemory::Pageable))
            else {
                continue;
            };
            let share = pageable.bytes_per_s.median / pinned.bytes_per_s.median;
            if share < PIN_WORTH {
                out.push(format!(
                    "GPU {}: pageable {} copies reach {:.0}% of pinned ({} against {} GB/s): pin the host buffers \
                     (cudaHostRegister, or allocate them with cudaMallocHost)",
                    d.index,
                    dir.name(),
                    100.0 * share,
                    gbps(pageable.bytes_per_s.median),
                    gbps(pinned.bytes_per_s.median)
                ));
            }
        }
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

/// Each copy path's bytes per second, one headline each.
fn gpu_metrics(o: &Outcome) -> Vec<Headline> {
    o.copies
        .iter()
        .map(|c| {
            let labels = [("device", c.device.to_string()), ("direction", c.direction.name().into()), ("host", c.host.name().into())];
            let samples: Vec<f64> = c.samples_bytes_per_s.iter().map(|x| x / 1e9).collect();
            let name = format!("gpu {} copy {}, {} host memory", c.device, c.direction.name(), c.host.name());
            headline("gpu.copy", &labels, name, Unit::GigabytesPerSecond, samples, c.bytes_per_s.median / 1e9, true)
        })
        .collect()
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
        gpu_advice(self)
    }
    fn nothing_measured(&self) -> Option<String> {
        self.not_measured.clone()
    }
    fn advice_row(&self, advice: &str) -> Option<String> {
        advice.contains("pageable").then(|| "pageable".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::outcome::gpu::Link;
    use crate::timing::Summary;

    fn transfer(direction: Direction, host: HostMemory, gbs: f64) -> Transfer {
        Transfer {
            device: 0,
            direction,
            host,
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
            not_measured: None,
            valid: true,
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

    #[test]
    fn each_path_is_a_headline() {
        let m = gpu_metrics(&outcome(19.0, 16));
        assert_eq!(m.len(), 3);
        assert!(m.iter().all(|h| h.id == "gpu.copy" && h.higher_is_better));
        assert_eq!(m[1].value, 19.0);
    }
}
