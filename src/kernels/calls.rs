//! The call chains of `memperf calls` (C, src/kernels/c/calls/): `first(n)`
//! and `second(n)` call each other until n reaches 1, so `first(n)` makes n
//! calls and returns n. Five builds of the same two functions differ only in
//! how a call gets from one to the other: `direct` (two objects linked into
//! memperf), `plt` (two shared libraries, through each other's PLT stub),
//! `got` (the same built with `-fno-plt`), `saves` (every callee-saved
//! register live, so each call spills and fills them) and `inlined` (no call
//! left). The shared libraries are embedded in the binary and loaded from a
//! private copy ([`SharedChain::load_copy`]), so it works wherever it is
//! copied and leaves nothing behind.

use crate::error::{Error, Result};
pub use memperf_model::kernels::calls::Linkage;
use std::ffi::{CStr, CString};

/// A chain's entry: `first(depth)`, which returns `depth`.
pub type ChainFn = unsafe extern "C" fn(i64) -> i64;

extern "C" {
    fn memperf_chain_direct_first(n: i64) -> i64;
    fn memperf_chain_saves_first(n: i64) -> i64;
    fn memperf_chain_inlined_first(n: i64) -> i64;
    fn memperf_chain_run(first: ChainFn, depth: i64, reps: i64) -> i64;
}

/// The entry of a chain linked into memperf (`None` for the shared ones).
pub fn linked(l: Linkage) -> Option<ChainFn> {
    match l {
        Linkage::Direct => Some(memperf_chain_direct_first),
        Linkage::Saves => Some(memperf_chain_saves_first),
        Linkage::Inlined => Some(memperf_chain_inlined_first),
        Linkage::Plt | Linkage::Got => None,
    }
}

/// Runs `first(depth)` `reps` times; returns the sum of the results, which
/// is `reps × depth` when every call returned its depth.
///
/// # Safety
/// `first` must be a chain entry of this module (they take any depth ≥ 1;
/// the stack must hold `depth` frames of at most ~64 bytes).
pub unsafe fn run(first: ChainFn, depth: u64, reps: u64) -> i64 {
    // SAFETY: as for this function; the runner only calls `first`.
    unsafe { memperf_chain_run(first, depth as i64, reps as i64) }
}

/// Copies of each shared chain, built by build.rs under sonames of their
/// own. Loaded side by side, they land at different addresses, so samples
/// spread over the copies hold several placements rather than one.
pub const COPIES: usize = 4;

/// The two libraries of copy `$copy` of chain `$variant`.
macro_rules! shared_pair {
    ($variant:literal, $copy:literal) => {
        (
            include_bytes!(concat!(env!("OUT_DIR"), "/libmemperf_", $variant, "_first_", $copy, ".so")),
            include_bytes!(concat!(env!("OUT_DIR"), "/libmemperf_", $variant, "_second_", $copy, ".so")),
        )
    };
}

type Pair = (&'static [u8], &'static [u8]);
static PLT: [Pair; COPIES] =
    [shared_pair!("plt", "0"), shared_pair!("plt", "1"), shared_pair!("plt", "2"), shared_pair!("plt", "3")];
static GOT: [Pair; COPIES] =
    [shared_pair!("got", "0"), shared_pair!("got", "1"), shared_pair!("got", "2"), shared_pair!("got", "3")];
/// The suite's host reference's own PLT pair (no copy of `calls` binds to it).
static PLT_REF: Pair = shared_pair!("plt", "ref");

/// A chain loaded from its two shared libraries. The libraries stay loaded
/// until this is dropped.
pub struct SharedChain {
    handle: *mut libc::c_void,
    pub first: ChainFn,
}

impl SharedChain {
    /// Loads copy 0 of the `plt` or `got` chain through the temporary
    /// directory. Fails (with the fix) where it does not allow executable
    /// mappings. (The experiment and the reference load theirs through
    /// [`SharedChain::load_all`] and [`SharedChain::load_reference`].)
    #[cfg(test)]
    pub fn load(l: Linkage) -> Result<SharedChain> {
        SharedChain::load_copy(l, 0, &std::env::temp_dir())
    }

    /// Every copy of the `plt` or `got` chain, loaded side by side.
    pub fn load_all(l: Linkage) -> Result<Vec<SharedChain>> {
        (0..COPIES).map(|k| SharedChain::load_copy(l, k, &std::env::temp_dir())).collect()
    }

    /// Copy `copy` (< [`COPIES`]), through a directory made inside `base`.
    ///
    /// build.rs builds the shared libraries [`COPIES`] times under sonames of
    /// their own and embeds them; a copy is written into a private temporary
    /// directory, loaded with `dlopen`, and its files removed at once (the
    /// mappings stay).
    pub fn load_copy(l: Linkage, copy: usize, base: &std::path::Path) -> Result<SharedChain> {
        let pair = match l {
            Linkage::Plt => PLT[copy],
            Linkage::Got => GOT[copy],
            _ => return Err(Error::usage(format!("the {l} chain is linked into memperf, not loaded"))),
        };
        SharedChain::load_pair(l, pair, &copy.to_string(), base)
    }

    /// The PLT pair of the suite's host reference, which stays loaded while
    /// `calls` loads its copies beside it.
    pub fn load_reference() -> Result<SharedChain> {
        SharedChain::load_pair(Linkage::Plt, PLT_REF, "ref", &std::env::temp_dir())
    }

    fn load_pair(l: Linkage, (first_so, second_so): Pair, copy: &str, base: &std::path::Path) -> Result<SharedChain> {
        let dir = PrivateDir::new(base)?;
        let names = [format!("libmemperf_{l}_first_{copy}.so"), format!("libmemperf_{l}_second_{copy}.so")];
        for (name, bytes) in names.iter().zip([first_so, second_so]) {
            std::fs::write(dir.path.join(name), bytes)
                .map_err(|e| Error::io(format!("cannot write {name} into {}", dir.path.display()), e))?;
        }
        // Loading `first` loads its own `second` beside it (RUNPATH=$ORIGIN;
        // each copy's soname is its own, so no other copy already loaded
        // answers for it); the two bind to each other as one group, and
        // close together.
        let handle = dl_open(&dir.path.join(&names[0]))?;
        let symbol = CString::new(format!("memperf_chain_{l}_first")).expect("no NUL");
        // SAFETY: handle is live; symbol is NUL-terminated.
        let f = unsafe { libc::dlsym(handle, symbol.as_ptr()) };
        if f.is_null() {
            // SAFETY: the handle came from dlopen.
            unsafe { libc::dlclose(handle) };
            return Err(Error::validation(format!("{} has no symbol {symbol:?}", names[0])));
        }
        // SAFETY: the symbol is `long memperf_chain_*_first(long)` (src/kernels/c/calls/first.c).
        let first = unsafe { std::mem::transmute::<*mut libc::c_void, ChainFn>(f) };
        Ok(SharedChain { handle, first })
    }

    /// Where a symbol of this chain's group lies (for tests: which load
    /// answered).
    #[cfg(test)]
    fn symbol(&self, symbol: &str) -> usize {
        let c = CString::new(symbol).expect("no NUL");
        // SAFETY: handle is live; c is NUL-terminated.
        unsafe { libc::dlsym(self.handle, c.as_ptr()) as usize }
    }
}

/// The file whose mapping holds `address` (for tests).
#[cfg(test)]
fn file_at(address: usize) -> String {
    // SAFETY: Dl_info is pointers and integers; all zero is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: info is a valid out-parameter; dladdr only reads the address.
    let found = unsafe { libc::dladdr(address as *const libc::c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return String::new();
    }
    // SAFETY: dladdr set dli_fname to a NUL-terminated path.
    unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned()
}

impl Drop for SharedChain {
    fn drop(&mut self) {
        // SAFETY: the handle came from dlopen and is closed once; nothing
        // calls into the chain after its owner is dropped.
        unsafe { libc::dlclose(self.handle) };
    }
}

fn dl_open(path: &std::path::Path) -> Result<*mut libc::c_void> {
    let c = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| Error::usage(format!("{}: a path with a NUL byte", path.display())))?;
    // SAFETY: c is NUL-terminated; RTLD_NOW resolves every symbol now, so a
    // missing one is an error here, not a crash mid-measurement.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if h.is_null() {
        // SAFETY: dlerror returns a NUL-terminated message or NULL.
        let why = unsafe {
            let e = libc::dlerror();
            if e.is_null() {
                "unknown error".to_string()
            } else {
                CStr::from_ptr(e).to_string_lossy().into_owned()
            }
        };
        return Err(Error::unsatisfiable(
            format!("cannot load the shared-library call chain from {}: {why}", path.display()),
            "point TMPDIR at a directory that allows executable files (not mounted noexec)",
        ));
    }
    Ok(h)
}

/// A fresh directory under the temporary directory, removed with its files
/// when dropped (after dlopen the mappings no longer need the files).
struct PrivateDir {
    path: std::path::PathBuf,
}

impl PrivateDir {
    fn new(base: &std::path::Path) -> Result<PrivateDir> {
        let template = base.join("memperf-calls-XXXXXX");
        let mut bytes = CString::new(template.as_os_str().as_encoded_bytes())
            .map_err(|_| Error::usage(format!("{}: a path with a NUL byte", base.display())))?
            .into_bytes_with_nul();
        // SAFETY: bytes is a writable NUL-terminated template ending in XXXXXX.
        let p = unsafe { libc::mkdtemp(bytes.as_mut_ptr() as *mut libc::c_char) };
        if p.is_null() {
            return Err(Error::unsatisfiable(
                format!("cannot create a directory in {}: {}", base.display(), std::io::Error::last_os_error()),
                "point TMPDIR at a writable directory",
            ));
        }
        bytes.pop();
        let path = std::path::PathBuf::from(String::from_utf8_lossy(&bytes).into_owned());
        Ok(PrivateDir { path })
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_chain() -> Vec<(Linkage, ChainFn, Option<SharedChain>)> {
        Linkage::ALL
            .into_iter()
            .map(|l| match linked(l) {
                Some(f) => (l, f, None),
                None => {
                    let s = SharedChain::load(l).expect("load the shared chain");
                    (l, s.first, Some(s))
                }
            })
            .collect()
    }

    #[test]
    fn every_chain_returns_its_depth() {
        for (l, f, _keep) in every_chain() {
            for depth in [1u64, 2, 3, 17, 4096] {
                // SAFETY: a chain entry; 4096 frames fit the test thread's stack.
                assert_eq!(unsafe { run(f, depth, 3) }, 3 * depth as i64, "{l} at depth {depth}");
            }
        }
    }

    /// Every chain function starts a 64-byte line (chain.h's
    /// `CHAIN_ALIGNED`), so where its code falls within a line (and
    /// `inlined`'s loop) is the same in every build of memperf.
    #[test]
    fn every_chain_function_starts_a_line() {
        extern "C" {
            fn memperf_chain_direct_second(n: i64) -> i64;
            fn memperf_chain_saves_second(n: i64) -> i64;
        }
        let seconds: [(Linkage, ChainFn); 2] =
            [(Linkage::Direct, memperf_chain_direct_second), (Linkage::Saves, memperf_chain_saves_second)];
        let chains = every_chain();
        let firsts = chains.iter().map(|(l, f, _)| (*l, *f as usize));
        // The shared chains' second functions, from the library each
        // first binds to.
        let shared_seconds = chains
            .iter()
            .filter_map(|(l, _, s)| s.as_ref().map(|s| (*l, s.symbol(&format!("memperf_chain_{l}_second")))));
        let all: Vec<(Linkage, usize)> =
            firsts.chain(seconds.map(|(l, f)| (l, f as usize))).chain(shared_seconds).collect();
        assert_eq!(all.len(), 9, "five firsts and four seconds (inlined has none): {all:x?}");
        for (l, at) in all {
            assert!(at != 0 && at % 64 == 0, "{l}: a chain function at {at:#x}");
        }
    }

    #[test]
    fn loading_leaves_no_files_behind() {
        let base = tempfile::tempdir().unwrap();
        for l in [Linkage::Plt, Linkage::Got] {
            let chain = SharedChain::load_copy(l, 0, base.path()).unwrap();
            let leftovers: Vec<_> = std::fs::read_dir(base.path()).unwrap().collect();
            assert!(leftovers.is_empty(), "{l}: {leftovers:?}");
            // SAFETY: a chain entry.
            assert_eq!(unsafe { run(chain.first, 10, 1) }, 10);
        }
    }

    /// Every copy loads beside the others and the host reference's pair
    /// (loaded first, as the suite holds it while `calls` runs), each
    /// `first` with a `second` of its own: no two loads share one (a shared
    /// soname made a later load answer to an earlier one's). Under `cargo
    /// test` the seconds may come from the build directory (cargo's
    /// LD_LIBRARY_PATH comes before RUNPATH), each still its own object.
    #[test]
    fn copies_load_side_by_side_each_with_its_own_second() {
        let reference = SharedChain::load_reference().expect("load the reference pair");
        let mut seconds = vec![reference.symbol("memperf_chain_plt_second")];
        for l in [Linkage::Plt, Linkage::Got] {
            let copies = SharedChain::load_all(l).expect("load every copy");
            assert_eq!(copies.len(), COPIES);
            for (k, chain) in copies.iter().enumerate() {
                let first = file_at(chain.first as usize);
                assert!(first.ends_with(&format!("libmemperf_{l}_first_{k}.so")), "{l} copy {k}: {first}");
                let second = chain.symbol(&format!("memperf_chain_{l}_second"));
                let file = file_at(second);
                assert!(file.ends_with(&format!("libmemperf_{l}_second_{k}.so")), "{l} copy {k}: {file}");
                seconds.push(second);
                // SAFETY: a chain entry.
                assert_eq!(unsafe { run(chain.first, 33, 2) }, 66, "{l} copy {k}");
            }
            let mut at: Vec<usize> = copies.iter().map(|c| c.first as usize).collect();
            at.sort_unstable();
            at.dedup();
            assert_eq!(at.len(), COPIES, "{l}: the copies share an address");
        }
        let n = seconds.len();
        seconds.sort_unstable();
        seconds.dedup();
        assert_eq!(seconds.len(), n, "two loads answer to one second");
    }

    #[test]
    fn an_unusable_directory_is_refused_with_a_fix() {
        let e = SharedChain::load_copy(Linkage::Plt, 0, std::path::Path::new("/proc/no-such-dir")).err().unwrap();
        assert_eq!(e.kind.exit_code(), 2);
        assert!(e.fix.as_deref().unwrap_or("").contains("TMPDIR"), "{e:?}");
    }

    #[test]
    fn names_parse_and_bad_ones_are_refused() {
        for l in Linkage::ALL {
            assert_eq!(Linkage::parse(l.name()).unwrap(), l);
        }
        let e = Linkage::parse("virtual").unwrap_err();
        assert!(e.message.contains("use one of direct, plt, got, saves, inlined"), "{}", e.message);
    }

    #[cfg(target_arch = "x86_64")]
    mod disassembly {
        use super::*;
        use crate::kernels::disasm::instructions;
        use iced_x86::{Mnemonic, OpKind, Register};

        fn calls_of(f: ChainFn) -> Vec<iced_x86::Instruction> {
            instructions(f as *const u8).into_iter().filter(|i| i.mnemonic() == Mnemonic::Call).collect()
        }

        /// The first instruction at `target` that is not an `endbr64`.
        fn first_real(target: u64) -> iced_x86::Instruction {
            let ins = instructions(target as *const u8);
            ins.into_iter().find(|i| i.mnemonic() != Mnemonic::Endbr64).expect("decodes")
        }

        #[test]
        fn direct_makes_a_real_call_and_returns() {
            let ins = instructions(memperf_chain_direct_first as *const u8);
            assert!(ins.iter().any(|i| i.mnemonic() == Mnemonic::Call && i.op0_kind() == OpKind::NearBranch64));
            assert!(ins.iter().any(|i| i.mnemonic() == Mnemonic::Ret));
        }

        #[test]
        fn plt_calls_go_through_a_plt_stub() {
            let chain = SharedChain::load(Linkage::Plt).unwrap();
            let call = calls_of(chain.first).into_iter().next().expect("a call");
            assert_eq!(call.op0_kind(), OpKind::NearBranch64, "a direct call to the stub");
            let stub = first_real(call.near_branch_target());
            assert_eq!(stub.mnemonic(), Mnemonic::Jmp, "{stub}");
            assert_eq!(stub.memory_base(), Register::RIP, "the stub jumps through the GOT: {stub}");
        }

        /// Where the GOT slot a RIP-relative `jmp`/`call` reads points.
        fn slot_target(i: &iced_x86::Instruction) -> usize {
            // SAFETY: the slot lies in a loaded library's GOT, filled at
            // load (RTLD_NOW) and mapped while the chain is held.
            unsafe { *(i.memory_displacement64() as *const usize) }
        }

        #[test]
        fn each_copy_calls_into_its_own_second() {
            let _reference = SharedChain::load_reference().unwrap();
            for l in [Linkage::Plt, Linkage::Got] {
                for (k, chain) in SharedChain::load_all(l).unwrap().iter().enumerate() {
                    let call = calls_of(chain.first).into_iter().next().expect("a call");
                    let reads_slot = match l {
                        Linkage::Plt => first_real(call.near_branch_target()),
                        _ => call,
                    };
                    let own = chain.symbol(&format!("memperf_chain_{l}_second"));
                    assert_eq!(slot_target(&reads_slot), own, "{l} copy {k}: the call goes to another load's second");
                }
            }
        }

        #[test]
        fn got_calls_are_indirect_through_the_got() {
            let chain = SharedChain::load(Linkage::Got).unwrap();
            let call = calls_of(chain.first).into_iter().next().expect("a call");
            assert_eq!(call.op0_kind(), OpKind::Memory, "{call}");
            assert_eq!(call.memory_base(), Register::RIP, "{call}");
        }

        #[test]
        fn saves_spill_every_callee_saved_register() {
            let ins = instructions(memperf_chain_saves_first as *const u8);
            let pushed: Vec<Register> =
                ins.iter().filter(|i| i.mnemonic() == Mnemonic::Push).map(|i| i.op0_register()).collect();
            for r in [Register::RBX, Register::R12, Register::R13, Register::R14, Register::R15] {
                assert!(pushed.contains(&r), "{r:?} not saved: {pushed:?}");
            }
            let direct = instructions(memperf_chain_direct_first as *const u8);
            assert!(direct.iter().filter(|i| i.mnemonic() == Mnemonic::Push).count() < pushed.len());
        }

        #[test]
        fn inlined_has_no_call_left() {
            let ins = instructions(memperf_chain_inlined_first as *const u8);
            assert!(ins.iter().all(|i| i.mnemonic() != Mnemonic::Call), "{ins:?}");
            assert!(ins.iter().any(|i| i.mnemonic() == Mnemonic::Ret));
        }
    }

    #[cfg(target_arch = "aarch64")]
    mod disassembly {
        use super::*;
        use crate::kernels::disasm::{instructions, mnemonics, name};

        /// The target of the first `bl` in `f`.
        fn first_bl_target(f: ChainFn) -> u64 {
            let (at, w) = instructions(f as *const u8).into_iter().find(|&(_, w)| name(w) == "bl").expect("a bl");
            let imm = (((w & 0x03ff_ffff) as i64) << 38) >> 38;
            at.wrapping_add((imm * 4) as u64)
        }

        #[test]
        fn direct_makes_a_real_call_and_returns() {
            let m = mnemonics(memperf_chain_direct_first as *const u8);
            assert!(m.iter().any(|x| x == "bl") && m.iter().any(|x| x == "ret"), "{m:?}");
        }

        #[test]
        fn plt_calls_go_through_a_plt_stub() {
            let chain = SharedChain::load(Linkage::Plt).unwrap();
            let stub = mnemonics(first_bl_target(chain.first) as *const u8);
            assert_eq!(stub.first().map(String::as_str), Some("adrp"), "the stub reads the GOT: {stub:?}");
            assert!(stub.iter().any(|x| x == "br"), "the stub jumps through the GOT: {stub:?}");
        }

        #[test]
        fn got_calls_are_indirect_through_the_got() {
            let chain = SharedChain::load(Linkage::Got).unwrap();
            let m = mnemonics(chain.first as *const u8);
            assert!(m.iter().any(|x| x == "blr"), "{m:?}");
            assert!(m.iter().all(|x| x != "bl"), "{m:?}");
        }

        #[test]
        fn saves_spill_more_callee_saved_registers() {
            let pairs = |f: ChainFn| mnemonics(f as *const u8).iter().filter(|x| x.starts_with("stp")).count();
            let (saves, direct) = (pairs(memperf_chain_saves_first), pairs(memperf_chain_direct_first));
            // x19..x28 and d8..d15: nine pairs beside the frame record.
            assert!(saves >= 9 && saves > direct, "saves {saves}, direct {direct}");
        }

        #[test]
        fn inlined_has_no_call_left() {
            let m = mnemonics(memperf_chain_inlined_first as *const u8);
            assert!(m.iter().all(|x| x != "bl" && x != "blr"), "{m:?}");
            assert!(m.iter().any(|x| x == "ret"), "{m:?}");
        }
    }
}
