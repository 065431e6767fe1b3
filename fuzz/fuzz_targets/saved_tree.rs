//! `info --from` on arbitrary bytes: as a tarball (plain, gzip, bzip2, xz),
//! and as the /proc/cpuinfo of a saved tree. Neither may panic, hang or
//! write outside the private temporary folder it makes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use memperf::machine::elsewhere::SavedMachine;
use memperf::machine::tree::Tree;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t");
    std::fs::write(&file, data).unwrap();
    if let Ok(tree) = Tree::open(&file) {
        let _ = SavedMachine::read(&tree);
    }
    let root = dir.path().join("tree");
    std::fs::create_dir_all(root.join("proc")).unwrap();
    std::fs::write(root.join("proc/cpuinfo"), data).unwrap();
    let tree = Tree::open(&root).unwrap();
    let _ = SavedMachine::read(&tree);
});
