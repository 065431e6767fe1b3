//! `numa` as text: two node × node matrices, or the one line saying why
//! there are none.

use crate::model::document::Document;
use crate::model::outcome::numa::Outcome;
use crate::report::headlines::{headline, Headline};
use crate::report::table::{gbps, Table};

pub fn numa_text(o: &Outcome) -> String {
    if let Some(reason) = &o.no_matrix {
        return format!("numa: {reason}\n");
    }
    let mut mem: Vec<usize> = o.cells.iter().map(|c| c.memory_node).collect();
    mem.sort();
    mem.dedup();
    let mut cpu: Vec<usize> = o.cells.iter().map(|c| c.cpu_node).collect();
    cpu.sort();
    cpu.dedup();
    let matrix = |title: &str, value: &dyn Fn(&crate::model::outcome::numa::Cell) -> String| {
        let mut header = vec!["CPUs of \\ memory on".to_string()];
        header.extend(mem.iter().map(|m| format!("node {m}")));
        let mut t = Table::new(header);
        for &c in &cpu {
            let mut row = vec![format!("node {c}")];
            for &m in &mem {
                let cell = o.cells.iter().find(|x| x.cpu_node == c && x.memory_node == m);
                row.push(cell.map_or_else(
                    || "-".into(),
                    |x| format!("{}{}", value(x), if x.placement_ok { "" } else { " (pages elsewhere)" }),
                ));
            }
            t.row(row);
        }
        format!("{title}\n{}", t.render())
    };
    let mut out = format!("memory bound to each node with mbind, {} per array\n", crate::units::Bytes(o.size_bytes));
    out.push_str(&matrix("latency, ns per load (one CPU, random chase, median):", &|x| {
        format!("{:.1}", x.latency_ns.median)
    }));
    out.push_str(&matrix("read bandwidth, GB/s (all the node's CPUs, median):", &|x| gbps(x.bytes_per_s.median)));
    out
}

/// Latency and read bandwidth of each (CPU node, memory node) cell, as
/// their medians (the document keeps no raw samples of a cell); none where
/// there is no matrix.
fn numa_metrics(o: &Outcome) -> Vec<Headline> {
    let mut out = Vec::new();
    for c in &o.cells {
        let labels = [("cpu_node", c.cpu_node.to_string()), ("memory_node", c.memory_node.to_string())];
        let nodes = format!("CPUs of node {}, memory on node {}", c.cpu_node, c.memory_node);
        out.push(headline(
            "numa.latency",
            &labels,
            format!("numa latency, {nodes}"),
            crate::report::headlines::Unit::Nanoseconds(None),
            vec![c.latency_ns.median],
            c.latency_ns.median,
            false,
        ));
        out.push(headline(
            "numa.read",
            &labels,
            format!("numa read bandwidth, {nodes}"),
            crate::report::headlines::Unit::GigabytesPerSecond,
            vec![c.bytes_per_s.median / 1e9],
            c.bytes_per_s.median / 1e9,
            true,
        )
        .on_cpus(o.nodes.iter().find(|n| n.id == c.cpu_node).map_or(1, |n| n.cpus.len().max(1))));
    }
    out
}

impl super::Render for Outcome {
    fn text(&self, _doc: &Document) -> String {
        numa_text(self)
    }
    /// Two small matrices: tables, not charts.
    fn plots(&self, _doc: &Document) -> crate::error::Result<Vec<crate::report::plot::Plot>> {
        Ok(Vec::new())
    }
    fn metrics(&self, _doc: &Document) -> Vec<Headline> {
        numa_metrics(self)
    }
    fn nothing_measured(&self) -> Option<String> {
        self.no_matrix.clone()
    }
    /// Where memory on another node costs more, the matrices say by how
    /// much; what to bind where is the program's to decide.
    fn advice(&self, _doc: &Document) -> Vec<String> {
        Vec::new()
    }
}
