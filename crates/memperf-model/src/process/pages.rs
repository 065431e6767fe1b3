//! What kind of memory a mapping is.

crate::named_enum! {
    /// What a mapping is, for a reader and for the huge-page verdict.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, schemars::JsonSchema)]
    pub enum MappingKind ("mapping kind") {
        /// `[heap]`: the brk heap.
        Heap = "heap",
        /// `[stack]`.
        Stack = "stack",
        /// Private anonymous memory (malloc's large blocks, mmap).
        Anonymous = "anonymous",
        /// Shared memory (shmem, tmpfs, SysV, memfd).
        Shared = "shared",
        /// Backed by a file (program text, libraries, mapped files).
        File = "file",
        /// `[vdso]`, `[vvar]`, `[vsyscall]` and the like.
        Special = "special",
    }
}

impl MappingKind {
    /// Whether malloc's huge-page tunables or madvise can put it on huge
    /// pages (file-backed pages live in the page cache).
    pub fn huge_pages_can_cover(self) -> bool {
        matches!(self, MappingKind::Heap | MappingKind::Anonymous | MappingKind::Stack)
    }
}
