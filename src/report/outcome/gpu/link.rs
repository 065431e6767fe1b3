//! The host link as text: every copy case in a table (each one-way path
//! against the best of its direction), what both directions at once add
//! up to, small copies' time each; and, as advice, where pinning host
//! memory pays and below what size copies are worth batching.

use crate::model::outcome::gpu::{Device, Direction, Engine, HostMemory, Outcome, SmallCopy, Transfer};
use crate::report::headlines::{headline, Headline, Unit};
use crate::report::table::{gbps, Table};
use crate::units::Bytes;

/// Below this share of pinned memory's rate, pageable copies are worth pinning.
const PIN_WORTH: f64 = 0.8;

/// The copy engine's one-way copy of `device` in `direction` from `host`.
pub(super) fn find(o: &Outcome, device: usize, direction: Direction, host: HostMemory) -> Option<&Transfer> {
    o.copies.iter().find(|c| {
        (c.device, c.direction, c.host, c.engine, c.both_ways) == (device, direction, host, Engine::CopyEngine, false)
    })
}

/// The fastest one-way copy of `device` in `direction`, by any engine
/// from any host memory.
fn best(o: &Outcome, device: usize, direction: Direction) -> Option<f64> {
    o.copies
        .iter()
        .filter(|c| c.device == device && c.direction == direction && !c.both_ways && c.valid)
        .map(|c| c.bytes_per_s.median)
        .max_by(f64::total_cmp)
}

/// A copy case's name: its direction, and "both ways" where the other
/// direction ran beside it.
fn case_name(c: &Transfer) -> String {
    format!("{}{}", c.direction.name(), if c.both_ways { " (both ways)" } else { "" })
}

pub(super) fn text(o: &Outcome) -> String {
    let mut t = Table::new(["GPU", "copy", "by", "host memory", "size", "GB/s", "min", "max", "of best", "queued", "check"]);
    for c in &o.copies {
        let of_best = match (c.both_ways, c.direction, best(o, c.device, c.direction)) {
            (false, Direction::HostToDevice | Direction::DeviceToHost, Some(b)) => {
                format!("{:.0}%", 100.0 * c.bytes_per_s.median / b)
            }
            _ => "-".into(),
        };
        t.row([
            c.device.to_string(),
            case_name(c),
            c.engine.name().into(),
            c.host.name().into(),
            Bytes(c.bytes).to_string(),
            gbps(c.bytes_per_s.median),
            gbps(c.bytes_per_s.min),
            gbps(c.bytes_per_s.max),
            of_best,
            if c.gated { "gated" } else { "as issued" }.into(),
            if c.valid { "ok" } else { "FAILED" }.into(),
        ]);
    }
    let mut out = "the host link and the driver's copies, timed by the device's events (device-to-device: bytes \
                   read and written; of best: of the fastest one-way path of that direction; gated: queued \
                   behind a spinning kernel, so no gap of the host's counts):\n"
        .to_string();
    out += &t.render();
    out.extend(both_ways_lines(o));
    out += &small_text(&o.small_copies);
    out
}

/// Each engine's two directions at once: their sum, against the faster
/// direction alone.
fn both_ways_lines(o: &Outcome) -> Vec<String> {
    let mut out = Vec::new();
    for d in o.devices.iter().map(|d| d.index) {
        for engine in [Engine::CopyEngine, Engine::Sm] {
            let both = |dir| {
                o.copies.iter().find(|c| (c.device, c.engine, c.direction, c.both_ways) == (d, engine, dir, true))
            };
            let alone = |dir| {
                o.copies
                    .iter()
                    .find(|c| (c.device, c.engine, c.direction, c.host, c.both_ways) == (d, engine, dir, HostMemory::Pinned, false))
                    .map(|c| c.bytes_per_s.median)
            };
            let (Some(up), Some(down)) = (both(Direction::HostToDevice), both(Direction::DeviceToHost)) else {
                continue;
            };
            let sum = up.bytes_per_s.median + down.bytes_per_s.median;
            let one = alone(Direction::HostToDevice).into_iter().chain(alone(Direction::DeviceToHost)).max_by(f64::total_cmp);
            let ratio = one.map_or(String::new(), |x| format!(", ×{:.2} one way's faster", sum / x));
            out.push(format!(
                "  GPU {d}: both ways at once by the {}: {} + {} = {} GB/s{ratio}\n",
                engine.name(),
                gbps(up.bytes_per_s.median),
                gbps(down.bytes_per_s.median),
                gbps(sum)
            ));
        }
    }
    out
}

fn small_text(small: &[SmallCopy]) -> String {
    if small.is_empty() {
        return String::new();
    }
    let mut t = Table::new(["GPU", "copy", "size", "µs each", "min", "max", "GB/s", "queued", "check"]);
    for c in small {
        t.row([
            c.device.to_string(),
            c.direction.name().into(),
            Bytes(c.bytes).to_string(),
            format!("{:.2}", c.seconds.median * 1e6),
            format!("{:.2}", c.seconds.min * 1e6),
            format!("{:.2}", c.seconds.max * 1e6),
            small_gbps(c.bytes as f64 / c.seconds.median),
            if c.gated { "gated" } else { "as issued" }.into(),
            if c.valid { "ok" } else { "FAILED" }.into(),
        ]);
    }
    format!(
        "small copies by the copy engine from and to pinned memory, {} back to back a sample (µs each: the sample over its copies):\n{}",
        small[0].copies_per_sample,
        t.render()
    )
}

/// A small copy's rate: under 1 GB/s with three decimals, so an 8-byte
/// copy's few MB/s do not read as nothing.
fn small_gbps(bytes_per_s: f64) -> String {
    if bytes_per_s < 1e9 {
        format!("{:.3}", bytes_per_s / 1e9)
    } else {
        gbps(bytes_per_s)
    }
}

/// Where pageable copies reach less than [`PIN_WORTH`] of pinned ones;
/// below what size a copy's fixed cost outweighs its bytes.
pub(super) fn advice(o: &Outcome, d: &Device) -> Vec<String> {
    let mut out = Vec::new();
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
    out.extend(batching(o, d));
    out
}

/// The size at which a host-to-device copy's bytes take as long as its
/// fixed cost (the smallest copy's time, gated): below it a copy moves
/// less than half the link's rate, so such copies are worth batching.
fn batching(o: &Outcome, d: &Device) -> Option<String> {
    let dir = Direction::HostToDevice;
    let smallest = o
        .small_copies
        .iter()
        .filter(|c| c.device == d.index && c.direction == dir && c.gated && c.valid)
        .min_by_key(|c| c.bytes)?;
    let rate = find(o, d.index, dir, HostMemory::Pinned).filter(|t| t.valid)?.bytes_per_s.median;
    let fixed_s = smallest.seconds.median;
    // Whole KiB, rounded up, so the size reads as one.
    let half_rate_bytes = (fixed_s * rate / 1024.0).ceil() as u64 * 1024;
    Some(format!(
        "GPU {}: a copy of {} to the device costs {:.1} µs, so only copies of {} or more reach half the link's {} GB/s: \
         gather small host-to-device transfers into one buffer and copy it once",
        d.index,
        Bytes(smallest.bytes),
        fixed_s * 1e6,
        Bytes(half_rate_bytes),
        gbps(rate)
    ))
}

/// Each copy case's bytes per second, and each small copy's time.
pub(super) fn metrics(o: &Outcome) -> Vec<Headline> {
    let copies = o.copies.iter().map(|c| {
        let labels = [
            ("device", c.device.to_string()),
            ("direction", c.direction.name().into()),
            ("host", c.host.name().into()),
            ("by", c.engine.name().replace(' ', "-")),
            ("ways", if c.both_ways { "both" } else { "one" }.into()),
        ];
        let samples: Vec<f64> = c.samples_bytes_per_s.iter().map(|x| x / 1e9).collect();
        let name = format!("gpu {} copy {}, {} host memory, by {}", c.device, case_name(c), c.host.name(), c.engine.name());
        headline("gpu.copy", &labels, name, Unit::GigabytesPerSecond, samples, c.bytes_per_s.median / 1e9, true)
    });
    let small = o.small_copies.iter().map(|c| {
        let labels =
            [("device", c.device.to_string()), ("direction", c.direction.name().into()), ("bytes", c.bytes.to_string())];
        let samples: Vec<f64> = c.samples_s.iter().map(|x| x * 1e9).collect();
        let name = format!("gpu {} small copy {} of {}", c.device, c.direction.name(), Bytes(c.bytes));
        headline("gpu.small_copy", &labels, name, Unit::ns_per("copy"), samples, c.seconds.median * 1e9, false)
    });
    copies.chain(small).collect()
}
