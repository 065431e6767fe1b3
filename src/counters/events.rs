//! The event catalogue: what `-e NAME` means.
//!
//! Names follow `perf list`: generic hardware events (`cycles`,
//! `instructions` …), generic cache events (`L1-dcache-load-misses`,
//! `LLC-load-misses`, `dTLB-load-misses` …), software events (`task-clock`,
//! `page-faults` …), raw `rNNNN` (hex config of the core PMU) and
//! `pmu/term=value,…/` (fields from the PMU's sysfs format). Named events for
//! page walks on the CPUs memperf meets are data, in `named_events.json`,
//! matched by CPUID vendor, family and model; on aarch64 the same names are
//! Arm's architected events ([`super::arm_events`]).

use memperf_model::cpu::CpuIdentity;
use serde::{Deserialize, Serialize};

/// perf_event_attr.type values (linux/perf_event.h).
pub const TYPE_HARDWARE: u32 = 0;
pub const TYPE_SOFTWARE: u32 = 1;
pub const TYPE_HW_CACHE: u32 = 3;
pub const TYPE_RAW: u32 = 4;

/// How an event is opened.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum EventKind {
    /// A perf type and config: generic hardware, cache, software or raw.
    Typed { perf_type: u32, config: u64 },
    /// `pmu/term=value,…/`: resolved through the PMU's sysfs format files.
    Pmu { pmu: String, terms: Vec<(String, u64)> },
    /// A named event this CPU has no encoding for: never opened, reported
    /// "not measured" with `reason`.
    NoEncoding { reason: String },
}

/// One event, as asked for and as it will be opened.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EventSpec {
    /// The name formulas and tables use (what the user typed).
    pub name: String,
    pub kind: EventKind,
    pub description: String,
}

impl EventSpec {
    /// Software events are counted by the kernel and work without a PMU.
    pub fn is_software(&self) -> bool {
        matches!(self.kind, EventKind::Typed { perf_type: TYPE_SOFTWARE, .. })
    }

    /// Why this event cannot be opened on this CPU, before trying.
    pub fn no_encoding(&self) -> Option<&str> {
        match &self.kind {
            EventKind::NoEncoding { reason } => Some(reason),
            _ => None,
        }
    }
}

const GENERIC: [(&str, u64, &str); 10] = [
    ("cycles", 0, "core clock cycles"),
    ("instructions", 1, "instructions retired"),
    ("cache-references", 2, "last-level cache references (the CPU's choice of event)"),
    ("cache-misses", 3, "last-level cache misses (the CPU's choice of event)"),
    ("branches", 4, "branch instructions retired"),
    ("branch-misses", 5, "mispredicted branches"),
    ("bus-cycles", 6, "bus cycles"),
    ("stalled-cycles-frontend", 7, "cycles the front end delivered nothing"),
    ("stalled-cycles-backend", 8, "cycles the back end accepted nothing"),
    ("ref-cycles", 9, "reference-clock cycles (not scaled by frequency)"),
];

const SOFTWARE: [(&str, u64, &str); 8] = [
    ("cpu-clock", 0, "ns of CPU time (hrtimer)"),
    ("task-clock", 1, "ns the task ran on a CPU"),
    ("page-faults", 2, "page faults, minor and major"),
    ("context-switches", 3, "context switches"),
    ("cpu-migrations", 4, "moves to another CPU"),
    ("minor-faults", 5, "page faults served without I/O"),
    ("major-faults", 6, "page faults that needed I/O"),
    ("alignment-faults", 7, "alignment faults"),
];

/// The unit of an event's count: `ns` for the two clocks the kernel keeps
/// in nanoseconds (`cpu-clock`, `task-clock`), else `count`.
pub fn unit_of(name: &str) -> &'static str {
    match name {
        "cpu-clock" | "task-clock" => "ns",
        _ => "count",
    }
}

/// Generic cache events: (cache prefix, cache id).
const CACHES: [(&str, u64); 6] =
    [("L1-dcache", 0), ("L1-icache", 1), ("LLC", 2), ("dTLB", 3), ("iTLB", 4), ("branch", 5)];
/// (operation word, op id).
const CACHE_OPS: [(&str, u64); 3] = [("load", 0), ("store", 1), ("prefetch", 2)];

/// A generic or software event by its perf name (a name from the tables
/// above; anything else is a programming error).
pub fn generic(name: &str) -> EventSpec {
    resolve(name, &CpuIdentity::default())
        .ok()
        .filter(|e| matches!(e.kind, EventKind::Typed { perf_type, .. } if perf_type <= TYPE_HW_CACHE))
        .unwrap_or_else(|| panic!("'{name}' is not a generic event"))
}

/// Every name `-e` accepts without a CPU-specific table, for help texts.
pub fn generic_names() -> Vec<String> {
    let mut v: Vec<String> = GENERIC.iter().chain(SOFTWARE.iter()).map(|e| e.0.to_string()).collect();
    for (c, _) in CACHES {
        for (op, _) in CACHE_OPS {
            v.push(format!("{c}-{op}s"));
            v.push(format!("{c}-{op}-misses"));
        }
    }
    v
}

fn cache_event(name: &str) -> Option<EventSpec> {
    for (cache, cid) in CACHES {
        let Some(rest) = name.strip_prefix(cache).and_then(|r| r.strip_prefix('-')) else { continue };
        for (op, oid) in CACHE_OPS {
            let (result, what) = if rest == format!("{op}s") {
                (0u64, "accesses")
            } else if rest == format!("{op}-misses") {
                (1, "misses")
            } else {
                continue;
            };
            return Some(EventSpec {
                name: name.into(),
                kind: EventKind::Typed { perf_type: TYPE_HW_CACHE, config: cid | oid << 8 | result << 16 },
                description: format!(
                    "{cache} {op} {what} (generic cache event: the kernel maps it to this CPU's event)"
                ),
            });
        }
    }
    None
}

/// One CPU family's table of named events.
#[derive(Debug, Clone, Deserialize)]
pub struct NamedTable {
    pub cpu: String,
    pub vendor: String,
    pub families: Vec<u32>,
    pub models: Option<Vec<u32>>,
    pub source: String,
    pub events: std::collections::BTreeMap<String, NamedEvent>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct NamedEvent {
    /// Raw config of the core PMU, in hex.
    pub config: String,
    pub description: String,
}

/// The built-in tables of named events.
pub fn named_tables() -> Vec<NamedTable> {
    serde_json::from_str(include_str!("named_events.json")).expect("named_events.json is valid (checked by a test)")
}

/// The table that applies to this CPU, if any.
pub fn table_for(cpu: &CpuIdentity) -> Option<NamedTable> {
    named_tables().into_iter().find(|t| {
        t.vendor == cpu.vendor
            && t.families.contains(&cpu.family)
            && t.models.as_ref().is_none_or(|m| m.contains(&cpu.model))
    })
}

fn hex(text: &str) -> Option<u64> {
    u64::from_str_radix(text.trim_start_matches("0x"), 16).ok()
}

fn number(text: &str) -> Option<u64> {
    if let Some(h) = text.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()
    } else {
        text.parse().ok()
    }
}

/// `pmu/event=0x12,umask=0xe,cmask=1/`.
fn pmu_event(name: &str) -> Result<Option<EventSpec>, String> {
    let Some((pmu, rest)) = name.split_once('/') else { return Ok(None) };
    let Some(body) = rest.strip_suffix('/') else {
        return Err(format!("event '{name}': a PMU event reads pmu/term=value,…/ and ends with '/'"));
    };
    if pmu.is_empty() || pmu.contains(['.', ' ']) {
        return Err(format!("event '{name}': name the PMU before the first '/', e.g. cpu/event=0x12,umask=0xe/"));
    }
    let mut terms = Vec::new();
    for t in body.split(',').filter(|t| !t.is_empty()) {
        let (k, v) = t.split_once('=').unwrap_or((t, "1"));
        let v = number(v).ok_or_else(|| format!("event '{name}': term '{t}' needs a number, e.g. umask=0x0e"))?;
        terms.push((k.to_string(), v));
    }
    if terms.is_empty() {
        return Err(format!("event '{name}': give at least one term, e.g. {pmu}/event=0x12,umask=0xe/"));
    }
    Ok(Some(EventSpec {
        name: name.into(),
        kind: EventKind::Pmu { pmu: pmu.into(), terms },
        description: format!("{pmu} PMU event"),
    }))
}

/// Whether `cpu` is the Arm CPU this aarch64 build runs on (events are
/// opened on the running machine; an x86 identity keeps its tables).
fn is_arm(cpu: &CpuIdentity) -> bool {
    cfg!(target_arch = "aarch64") && !matches!(cpu.vendor.as_str(), "GenuineIntel" | "AuthenticAMD" | "HygonGenuine")
}

/// Resolves one `-e` name against the catalogue and this CPU's table.
pub fn resolve(name: &str, cpu: &CpuIdentity) -> Result<EventSpec, String> {
    let name = name.trim();
    let typed = |perf_type, config, d: &str| EventSpec {
        name: name.into(),
        kind: EventKind::Typed { perf_type, config },
        description: d.into(),
    };
    if let Some((_, c, d)) = GENERIC.iter().find(|e| e.0 == name) {
        return Ok(typed(TYPE_HARDWARE, *c, d));
    }
    if let Some((_, c, d)) = SOFTWARE.iter().find(|e| e.0 == name) {
        return Ok(typed(TYPE_SOFTWARE, *c, d));
    }
    if let Some(e) = cache_event(name) {
        return Ok(e);
    }
    if let Some(e) = pmu_event(name)? {
        return Ok(e);
    }
    if let Some(h) = name.strip_prefix('r').filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit())) {
        let config = hex(h).ok_or_else(|| format!("event '{name}': raw config too large for 64 bits"))?;
        return Ok(typed(TYPE_RAW, config, "raw event of the core PMU"));
    }
    if is_arm(cpu) {
        if let Some(e) = super::arm_events::resolve(name, std::path::Path::new("/sys/bus/event_source/devices")) {
            let kind = match e.open {
                Ok((pmu, number)) => EventKind::Pmu { pmu, terms: vec![("event".into(), number)] },
                Err(reason) => EventKind::NoEncoding { reason },
            };
            return Ok(EventSpec { name: name.into(), kind, description: e.description });
        }
    }
    if let Some(table) = table_for(cpu) {
        if let Some(e) = table.events.get(name) {
            let config = hex(&e.config).expect("named_events.json configs are hex (checked by a test)");
            return Ok(typed(TYPE_RAW, config, &format!("{} [{}]", e.description, table.cpu)));
        }
    }
    let tables: Vec<String> =
        named_tables().into_iter().filter(|t| t.events.contains_key(name)).map(|t| t.cpu).collect();
    if !tables.is_empty() {
        // Counted where it can be: the other events still are.
        return Ok(EventSpec {
            name: name.into(),
            kind: EventKind::NoEncoding {
                reason: format!(
                    "no encoding for {} family {} model {} ({name} is defined for {} only)",
                    cpu.vendor,
                    cpu.family,
                    cpu.model,
                    tables.join("; ")
                ),
            },
            description: "a named event of other CPUs".into(),
        });
    }
    Err(format!(
        "unknown event '{name}': use a perf name (cycles, instructions, dTLB-load-misses, page-faults …), rNNNN or pmu/event=…,umask=…/"
    ))
}

/// Parses `-e a,b,c`; PMU events may contain commas inside their slashes.
pub fn resolve_list(text: &str, cpu: &CpuIdentity) -> Result<Vec<EventSpec>, String> {
    let mut names = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        // Inside a PMU event's slashes a comma separates its terms.
        if c == ',' && current.matches('/').count().is_multiple_of(2) {
            names.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    names.push(current);
    let mut out: Vec<EventSpec> = Vec::new();
    for n in names.iter().map(|n| n.trim()) {
        if n.is_empty() {
            return Err(format!("-e '{text}': an empty event name; separate events with single commas"));
        }
        let spec = resolve(n, cpu)?;
        if out.iter().any(|e| e.name == spec.name) {
            return Err(format!("-e: '{n}' appears twice in the list: give each event once"));
        }
        out.push(spec);
    }
    Ok(out)
}

/// This CPU's page-walk event and load event: the named ones where the CPU
/// has a table, else the generic cache events nearest them.
pub fn walks_and_loads(cpu: &CpuIdentity) -> (&'static str, &'static str) {
    if is_arm(cpu) || table_for(cpu).is_some_and(|t| t.events.contains_key("dtlb-walks")) {
        ("dtlb-walks", "loads")
    } else {
        ("dTLB-load-misses", "L1-dcache-loads")
    }
}

/// Few events, so that they fit the counters without multiplexing: cycles,
/// instructions, page walks, CPU time and page faults (the region API's
/// and each `hugepages` run's).
pub fn compact_set(cpu: &CpuIdentity) -> Vec<EventSpec> {
    let (walks, _) = walks_and_loads(cpu);
    ["cycles", "instructions", walks, "task-clock", "page-faults"]
        .iter()
        .map(|n| resolve(n, cpu).expect("the compact events are in the catalogue"))
        .collect()
}

/// The events `stat` counts by default: the hardware ones the derived
/// metrics need (CPU-specific walk events where this CPU has a table) and
/// the software ones that work everywhere.
pub fn default_set(cpu: &CpuIdentity) -> Vec<EventSpec> {
    let mut names = vec![
        "cycles",
        "instructions",
        "L1-dcache-loads",
        "L1-dcache-load-misses",
        "LLC-loads",
        "LLC-load-misses",
        "dTLB-loads",
        "dTLB-load-misses",
    ];
    if is_arm(cpu) {
        names.extend(["dtlb-walks", "dtlb-walk-cycles", "loads"]);
    } else if table_for(cpu).is_some_and(|t| t.events.contains_key("dtlb-walks")) {
        names.push("dtlb-walks");
    }
    names.extend(["task-clock", "page-faults", "minor-faults", "major-faults", "context-switches", "cpu-migrations"]);
    names.iter().map(|n| resolve(n, cpu).expect("the default events are in the catalogue")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zen5() -> CpuIdentity {
        CpuIdentity { vendor: "AuthenticAMD".into(), family: 26, model: 2, ..Default::default() }
    }
    fn spr() -> CpuIdentity {
        CpuIdentity { vendor: "GenuineIntel".into(), family: 6, model: 143, ..Default::default() }
    }

    #[test]
    fn the_named_tables_parse_and_their_configs_are_hex() {
        let tables = named_tables();
        assert_eq!(tables.len(), 2);
        for t in &tables {
            for (n, e) in &t.events {
                assert!(hex(&e.config).is_some(), "{} {n}", t.cpu);
            }
            assert!(t.events.contains_key("dtlb-walks"), "{}", t.cpu);
        }
    }

    #[test]
    fn generic_events_have_the_kernels_encodings() {
        let c = zen5();
        assert_eq!(resolve("instructions", &c).unwrap().kind, EventKind::Typed { perf_type: 0, config: 1 });
        assert_eq!(resolve("page-faults", &c).unwrap().kind, EventKind::Typed { perf_type: 1, config: 2 });
        assert!(resolve("task-clock", &c).unwrap().is_software());
        // PERF_COUNT_HW_CACHE_DTLB | OP_READ << 8 | RESULT_MISS << 16
        assert_eq!(resolve("dTLB-load-misses", &c).unwrap().kind, EventKind::Typed { perf_type: 3, config: 0x10003 });
        assert_eq!(resolve("LLC-loads", &c).unwrap().kind, EventKind::Typed { perf_type: 3, config: 2 });
        assert_eq!(resolve("r0e12", &c).unwrap().kind, EventKind::Typed { perf_type: 4, config: 0xe12 });
    }

    #[test]
    fn named_walk_events_follow_the_cpu() {
        let amd = resolve("dtlb-walks", &zen5()).unwrap();
        assert_eq!(amd.kind, EventKind::Typed { perf_type: TYPE_RAW, config: 0xf045 });
        let intel = resolve("dtlb-walks", &spr()).unwrap();
        assert_eq!(intel.kind, EventKind::Typed { perf_type: TYPE_RAW, config: 0x0e12 });
        let active = resolve("dtlb-walk-cycles", &spr()).unwrap();
        assert_eq!(active.kind, EventKind::Typed { perf_type: TYPE_RAW, config: 0x0100_1012 });
        // Named for other CPUs only: resolved, to be reported not measured.
        let e = resolve("dtlb-walk-cycles", &zen5()).unwrap();
        let why = e.no_encoding().unwrap();
        assert!(why.contains("no encoding for AuthenticAMD family 26 model 2") && why.contains("Intel"), "{why}");
        let rocket = CpuIdentity { vendor: "GenuineIntel".into(), family: 6, model: 167, ..Default::default() };
        assert!(resolve("dtlb-walks", &rocket).unwrap().no_encoding().unwrap().contains("model 167"));
        assert!(resolve("cycles", &rocket).unwrap().no_encoding().is_none());
    }

    #[test]
    fn pmu_events_and_lists() {
        let c = zen5();
        let v = resolve_list("cycles,cpu/event=0x12,umask=0xe,cmask=1/,page-faults", &c).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(
            v[1].kind,
            EventKind::Pmu {
                pmu: "cpu".into(),
                terms: vec![("event".into(), 0x12), ("umask".into(), 0xe), ("cmask".into(), 1)]
            }
        );
        assert!(resolve_list("cycles,cycles", &c).unwrap_err().contains("appears twice"), "duplicates are refused");
        assert!(resolve_list("cycles,,page-faults", &c).unwrap_err().contains("empty event name"));
        assert!(resolve("cpu/event=zz/", &c).unwrap_err().contains("needs a number"));
        assert!(resolve("cpu/event=1", &c).unwrap_err().contains("ends with '/'"));
        assert!(resolve("bogus", &c).unwrap_err().starts_with("unknown event 'bogus'"));
    }

    #[test]
    fn the_default_set_adds_walks_where_the_cpu_has_them() {
        assert!(default_set(&zen5()).iter().any(|e| e.name == "dtlb-walks"));
        let unknown = CpuIdentity { vendor: "Other".into(), ..Default::default() };
        let d = default_set(&unknown);
        // On aarch64 any non-x86 CPU has Arm's architected walk event.
        assert_eq!(d.iter().any(|e| e.name == "dtlb-walks"), cfg!(target_arch = "aarch64"));
        assert!(d.iter().any(|e| e.name == "task-clock" && e.is_software()));
        assert!(generic_names().contains(&"dTLB-load-misses".to_string()));
    }
}
