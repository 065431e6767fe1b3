//! NUMA nodes from sysfs, and binding a region's pages to one node
//! (mbind), so that a measurement can place its memory on a chosen node.

use std::path::Path;

/// One node: its id, the CPUs it holds (as sysfs lists them) and whether
/// it has memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub id: usize,
    pub cpus: Vec<usize>,
    pub has_memory: bool,
}

/// The online nodes under `root` (`/sys/devices/system/node`), in id order;
/// empty when the kernel has no NUMA support (no such folder).
pub fn nodes(root: &Path) -> Vec<Node> {
    let read = |p: &Path| std::fs::read_to_string(p).ok();
    let list = |t: Option<String>| t.map(|t| crate::units::cpu_list(&t)).unwrap_or_default();
    let online = list(read(&root.join("online")));
    let with_memory = read(&root.join("has_memory")).map(|t| crate::units::cpu_list(&t));
    online
        .into_iter()
        .map(|id| Node {
            id,
            cpus: list(read(&root.join(format!("node{id}/cpulist")))),
            has_memory: with_memory.as_ref().is_none_or(|m| m.contains(&id)),
        })
        .collect()
}

/// Binds `len` bytes at `addr` (page-aligned, not yet touched) to `node`:
/// every page faulted in later comes from that node, or the fault fails.
pub fn bind(addr: usize, len: usize, node: usize) -> std::io::Result<()> {
    const MPOL_BIND: libc::c_ulong = 2;
    if node >= 64 * 16 {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    let mut mask = [0 as libc::c_ulong; 16];
    mask[node / 64] |= 1 << (node % 64);
    // SAFETY: mbind reads `mask` (16 × 64 bits, maxnode says so) and
    // changes only the memory policy of the caller's own range.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr,
            len,
            MPOL_BIND,
            mask.as_ptr(),
            (16 * 64) as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_come_from_sysfs() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("online"), "0-1\n").unwrap();
        std::fs::write(d.path().join("has_memory"), "0\n").unwrap();
        for (n, cpus) in [(0, "0-3\n"), (1, "4-7\n")] {
            std::fs::create_dir(d.path().join(format!("node{n}"))).unwrap();
            std::fs::write(d.path().join(format!("node{n}/cpulist")), cpus).unwrap();
        }
        let n = nodes(d.path());
        assert_eq!(n.len(), 2);
        assert_eq!((n[1].id, n[1].cpus.clone(), n[1].has_memory), (1, vec![4, 5, 6, 7], false));
        assert!(n[0].has_memory);
        assert!(nodes(&d.path().join("absent")).is_empty());
    }

    /// Pages of a region bound to node 0 live on node 0 once touched (every
    /// Linux machine has a node 0 with memory).
    #[test]
    fn a_bound_region_lives_on_its_node() {
        let mut r =
            crate::memory::Buffer::untouched(crate::memory::PagePolicy::Small, crate::units::Bytes(1 << 20)).unwrap();
        let len = r.len();
        bind(r.as_mut_slice::<u8>().as_mut_ptr() as usize, len, 0).unwrap();
        let s = r.as_mut_slice::<u8>();
        s.iter_mut().step_by(4096).for_each(|b| *b = 1);
        for off in (0..len).step_by(64 * 1024) {
            assert_eq!(crate::memory::buffer::numa_node_of(s.as_ptr() as usize + off), Some(0));
        }
        assert!(bind(s.as_mut_ptr() as usize, len, 5000).is_err(), "a node beyond the mask is refused");
    }
}
