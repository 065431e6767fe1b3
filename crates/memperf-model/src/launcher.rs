//! Which launcher started this process, and where it placed it: rank,
//! local rank, sizes and job id from the environment of Open MPI, PMIx,
//! MPICH/Hydra (PMI) and Slurm. MPI's variables come first: `mpirun`
//! inside a Slurm allocation inherits the allocation's Slurm variables,
//! which then describe the allocation, not the MPI rank.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Launch {
    /// `openmpi`, `pmix`, `mpich` or `slurm`.
    pub launcher: String,
    pub rank: u64,
    /// Rank among the processes on this host.
    pub local_rank: Option<u64>,
    /// Processes in the job, and on this host.
    pub ranks: Option<u64>,
    pub ranks_on_host: Option<u64>,
    pub job_id: Option<String>,
}

/// Variable names of one launcher: rank, local rank, size, local size, job.
struct Vars {
    name: &'static str,
    rank: &'static str,
    local_rank: &'static str,
    size: &'static str,
    local_size: &'static str,
    job: &'static str,
}

const LAUNCHERS: [Vars; 4] = [
    Vars {
        name: "openmpi",
        rank: "OMPI_COMM_WORLD_RANK",
        local_rank: "OMPI_COMM_WORLD_LOCAL_RANK",
        size: "OMPI_COMM_WORLD_SIZE",
        local_size: "OMPI_COMM_WORLD_LOCAL_SIZE",
        job: "OMPI_MCA_orte_ess_jobid",
    },
    Vars {
        name: "pmix",
        rank: "PMIX_RANK",
        local_rank: "PMIX_LOCAL_RANK",
        size: "PMIX_SIZE",
        local_size: "PMIX_LOCAL_SIZE",
        job: "PMIX_NAMESPACE",
    },
    Vars {
        name: "mpich",
        rank: "PMI_RANK",
        local_rank: "MPI_LOCALRANKID",
        size: "PMI_SIZE",
        local_size: "MPI_LOCALNRANKS",
        job: "PMI_KVSNAME",
    },
    Vars {
        name: "slurm",
        rank: "SLURM_PROCID",
        local_rank: "SLURM_LOCALID",
        size: "SLURM_NTASKS",
        local_size: "SLURM_NTASKS_PER_NODE",
        job: "SLURM_JOB_ID",
    },
];

/// The launch this process is part of, from the environment.
pub fn detect() -> Option<Launch> {
    detect_from(|v| std::env::var(v).ok())
}

/// As [`detect`], from any environment.
pub fn detect_from(env: impl Fn(&str) -> Option<String>) -> Option<Launch> {
    let num = |v: &str| env(v).and_then(|x| x.trim().parse::<u64>().ok());
    LAUNCHERS.iter().find_map(|l| {
        let rank = num(l.rank)?;
        let job = env(l.job).filter(|j| !j.trim().is_empty());
        // Slurm writes the tasks per node as "2(x3),1" when no
        // --ntasks-per-node was given: the first count is this node's for
        // a block distribution, so only a plain number is taken.
        let ranks_on_host = num(l.local_size).or_else(|| {
            (l.name == "slurm").then(|| env("SLURM_TASKS_PER_NODE")).flatten().and_then(|t| t.trim().parse().ok())
        });
        Some(Launch {
            launcher: l.name.into(),
            rank,
            local_rank: num(l.local_rank),
            ranks: num(l.size),
            ranks_on_host,
            job_id: job,
        })
    })
}

/// The results folder of one rank inside `-o DIR`:
/// `<host>-<rank>-<run id>`, the run id without its leading host name
/// (its start time and pid), so that no two processes share one.
pub fn rank_folder(host: &str, rank: u64, run_id: &str) -> String {
    let safe = |t: &str| -> String {
        t.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect()
    };
    let id = run_id.strip_prefix(host).and_then(|r| r.strip_prefix('-')).unwrap_or(run_id);
    format!("{}-{rank}-{}", safe(host), safe(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |v| pairs.iter().find(|p| p.0 == v).map(|p| p.1.to_string())
    }

    #[test]
    fn each_launcher_is_recognised_by_its_variables() {
        let slurm = detect_from(env(&[
            ("SLURM_PROCID", "3"),
            ("SLURM_LOCALID", "1"),
            ("SLURM_NTASKS", "8"),
            ("SLURM_TASKS_PER_NODE", "2(x4)"),
            ("SLURM_JOB_ID", "4711"),
        ]))
        .unwrap();
        assert_eq!(
            slurm,
            Launch {
                launcher: "slurm".into(),
                rank: 3,
                local_rank: Some(1),
                ranks: Some(8),
                ranks_on_host: None,
                job_id: Some("4711".into())
            }
        );
        let ompi = detect_from(env(&[
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
            ("OMPI_COMM_WORLD_SIZE", "2"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
            ("SLURM_PROCID", "0"),
        ]))
        .unwrap();
        assert_eq!(
            (ompi.launcher.as_str(), ompi.rank, ompi.ranks_on_host),
            ("openmpi", 1, Some(2)),
            "MPI before Slurm"
        );
        let pmix = detect_from(env(&[("PMIX_RANK", "5"), ("PMIX_NAMESPACE", "job.7")])).unwrap();
        assert_eq!((pmix.launcher.as_str(), pmix.rank, pmix.job_id.as_deref()), ("pmix", 5, Some("job.7")));
        let mpich = detect_from(env(&[("PMI_RANK", "2"), ("MPI_LOCALRANKID", "0"), ("MPI_LOCALNRANKS", "4")])).unwrap();
        assert_eq!((mpich.launcher.as_str(), mpich.local_rank, mpich.ranks_on_host), ("mpich", Some(0), Some(4)));
        assert_eq!(detect_from(env(&[("SLURM_PROCID", "x")])), None, "a rank must parse");
        assert_eq!(detect_from(env(&[])), None);
        let plain = detect_from(env(&[("SLURM_PROCID", "0"), ("SLURM_TASKS_PER_NODE", "2")])).unwrap();
        assert_eq!(plain.ranks_on_host, Some(2));
    }

    #[test]
    fn rank_folders_differ_by_rank_and_keep_odd_host_names_safe() {
        assert_eq!(rank_folder("n01", 3, "n01-1700000000-42"), "n01-3-1700000000-42");
        assert_ne!(rank_folder("n01", 0, "n01-1-2"), rank_folder("n01", 1, "n01-1-2"));
        assert_eq!(rank_folder("a/b c", 0, "a/b c-1-2"), "a_b_c-0-1-2");
    }
}
