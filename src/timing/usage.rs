//! CPU time and page faults of the calling thread (getrusage), for the
//! experiments that report user and system time beside their timings.

/// CPU time and faults of the calling thread.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub user_s: f64,
    pub system_s: f64,
    pub faults: u64,
}

impl Usage {
    pub fn now() -> Usage {
        // SAFETY: rusage is plain data; getrusage fills it.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer to a rusage.
        unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        Usage { user_s: s(u.ru_utime), system_s: s(u.ru_stime), faults: (u.ru_minflt + u.ru_majflt) as u64 }
    }

    pub fn since(self, before: Usage) -> Usage {
        Usage {
            user_s: self.user_s - before.user_s,
            system_s: self.system_s - before.system_s,
            faults: self.faults - before.faults,
        }
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;
    fn add(self, o: Usage) -> Usage {
        Usage { user_s: self.user_s + o.user_s, system_s: self.system_s + o.system_s, faults: self.faults + o.faults }
    }
}
