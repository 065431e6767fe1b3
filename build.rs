//! Build script: records the git revision the binary was built from (for
//! the result document; "unknown" outside a git checkout) and whether a
//! real aarch64 run is recorded in tests/data/machines, and compiles the
//! C parts of `memperf calls` and `memperf context` with the system C
//! compiler that Rust's linker already needs (through the `cc` crate).
//!
//! The call chains come in several builds of the same two C files (see
//! src/kernels/c/calls/chain.h): static archives linked into memperf (`direct`,
//! `saves`, `inlined`), and pairs of shared libraries (`plt`, `got`) that
//! are embedded into the binary as bytes and loaded at run time, so the
//! binary keeps working when it is copied elsewhere. Each shared pair is
//! built [`SHARED_COPIES`] times under sonames of its own, so the copies
//! can be loaded side by side, each bound to its own partner, and the PLT
//! pair once more for the suite's host reference.
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    git_revision();
    arm_recorded();
    println!("cargo:rerun-if-changed=src/kernels/c");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    static_chain("direct", &["src/kernels/c/calls/first.c", "src/kernels/c/calls/second.c"], &[]);
    static_chain("saves", &["src/kernels/c/calls/first.c", "src/kernels/c/calls/second.c"], &[("CHAIN_SAVES", "1")]);
    // Inlining and tail-recursion elimination allowed: the cure.
    let mut inlined = cc::Build::new();
    inlined.opt_level(2).warnings(true).file("src/kernels/c/calls/inlined.c").compile("memperf_chain_inlined");
    let mut runner = base_build();
    runner.file("src/kernels/c/calls/runner.c").compile("memperf_chain_runner");
    let mut context = base_build();
    context.file("src/kernels/c/context/context.c").compile("memperf_context");
    for (variant, flags) in [("plt", &[][..]), ("got", &["-fno-plt"][..])] {
        for copy in 0..SHARED_COPIES {
            shared_chain(&out, variant, &copy.to_string(), flags);
        }
    }
    // The suite's host reference keeps a PLT chain loaded while `calls`
    // runs: a pair of its own names, which no copy of `calls` binds to.
    shared_chain(&out, "plt", "ref", &[]);
}

/// Copies of each shared chain (src/kernels/calls.rs embeds as many).
const SHARED_COPIES: usize = 4;

fn git_revision() {
    let rev = Command::new("git")
        .args(["describe", "--always", "--dirty", "--abbrev=12"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=MEMPERF_GIT_REVISION={rev}");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/index");
}

/// Whether tests/data/machines holds a real aarch64 machine's run (a
/// recording whose `arch` says aarch64, beside its `run-quick.json`):
/// until one does, memperf says on aarch64 that its figures are unchecked.
fn arm_recorded() {
    let dir = Path::new("tests/data/machines");
    println!("cargo:rerun-if-changed={}", dir.display());
    let recorded = std::fs::read_dir(dir).into_iter().flatten().flatten().any(|e| {
        let arch = std::fs::read_to_string(e.path().join("arch")).unwrap_or_default();
        arch.trim() == "aarch64" && e.path().join("run-quick.json").is_file()
    });
    println!("cargo:rustc-env=MEMPERF_ARM_RECORDED={}", u8::from(recorded));
}

/// -O2, no inlining across the chain, no sibling-call tricks, frame
/// layout left to the compiler.
fn base_build() -> cc::Build {
    let mut b = cc::Build::new();
    b.opt_level(2).flag_if_supported("-fno-optimize-sibling-calls").warnings(true);
    b
}

fn static_chain(variant: &str, files: &[&str], defines: &[(&str, &str)]) {
    let mut b = base_build();
    b.define("PREFIX", format!("memperf_chain_{variant}").as_str()).define("CHAIN_LINKAGE", "");
    for (k, v) in defines {
        b.define(k, *v);
    }
    b.files(files).compile(&format!("memperf_chain_{variant}"));
}

/// Two shared libraries: `first` (which needs `second`, found next to it
/// through RUNPATH=$ORIGIN) and `second` (whose reference to `first` is
/// left undefined and bound to the first library when both are loaded).
/// Copy `copy` (a number, or `ref`) names both libraries, sonames
/// included: a `first` asks for its own `second`, never one another copy
/// loaded.
fn shared_chain(out: &Path, variant: &str, copy: &str, flags: &[&str]) {
    let compiler = base_build().get_compiler();
    let second_name = format!("memperf_{variant}_second_{copy}");
    let second = out.join(format!("lib{second_name}.so"));
    let first = out.join(format!("libmemperf_{variant}_first_{copy}.so"));
    let common = |cmd: &mut Command, src: &str| {
        cmd.args(["-O2", "-fPIC", "-shared", "-fno-optimize-sibling-calls", "-Isrc/kernels/c/calls"])
            .arg(format!("-DPREFIX=memperf_chain_{variant}"))
            .arg("-DCHAIN_LINKAGE=")
            .args(flags)
            .arg(src);
    };
    let mut cmd = compiler.to_command();
    common(&mut cmd, "src/kernels/c/calls/second.c");
    cmd.arg(format!("-Wl,-soname,lib{second_name}.so")).arg("-o").arg(&second);
    run(cmd);
    let mut cmd = compiler.to_command();
    common(&mut cmd, "src/kernels/c/calls/first.c");
    cmd.arg(format!("-Wl,-soname,libmemperf_{variant}_first_{copy}.so"))
        .arg("-Wl,-rpath,$ORIGIN")
        .arg(format!("-L{}", out.display()))
        .arg(format!("-l{second_name}"))
        .arg("-o")
        .arg(&first);
    run(cmd);
}

fn run(mut cmd: Command) {
    let status = cmd.status().unwrap_or_else(|e| panic!("cannot run the C compiler ({cmd:?}): {e}"));
    assert!(status.success(), "the C compiler failed: {cmd:?}");
}
