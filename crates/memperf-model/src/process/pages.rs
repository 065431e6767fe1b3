//! What kind of memory a mapping is.

/// What a mapping is, for a reader and for the huge-page verdict.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum MappingKind {
    /// `[heap]`: the brk heap.
    Heap,
    /// `[stack]`.
    Stack,
    /// Private anonymous memory (malloc's large blocks, mmap).
    Anonymous,
    /// Shared memory (shmem, tmpfs, SysV, memfd).
    Shared,
    /// Backed by a file (program text, libraries, mapped files).
    File,
    /// `[vdso]`, `[vvar]`, `[vsyscall]` and the like.
    Special,
}

impl MappingKind {
    pub fn name(self) -> &'static str {
        match self {
            MappingKind::Heap => "heap",
            MappingKind::Stack => "stack",
            MappingKind::Anonymous => "anonymous",
            MappingKind::Shared => "shared",
            MappingKind::File => "file",
            MappingKind::Special => "special",
        }
    }

    /// Whether malloc's huge-page tunables or madvise can put it on huge
    /// pages (file-backed pages live in the page cache).
    pub fn huge_pages_can_cover(self) -> bool {
        matches!(self, MappingKind::Heap | MappingKind::Anonymous | MappingKind::Stack)
    }
}
