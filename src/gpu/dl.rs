//! A library loaded at run time: each entry point resolved by name, a
//! missing one an error naming it and its library, never a panic.

use std::ffi::c_void;

/// Resolves `name` in `lib` (the library `library`), as a function
/// pointer of type `T`.
///
/// # Safety
/// `T` must be the C signature the library gives `name`.
pub(super) unsafe fn symbol<T: Copy>(lib: *mut c_void, library: &str, name: &str) -> Result<T, String> {
    let c = std::ffi::CString::new(name).expect("no NUL in a symbol name");
    // SAFETY: lib is a handle dlopen returned; c is NUL-terminated.
    let p = unsafe { libc::dlsym(lib, c.as_ptr()) };
    if p.is_null() {
        return Err(format!("{library} lacks {name}: update it"));
    }
    assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<*mut c_void>(), "a function pointer");
    // SAFETY: a non-null symbol of the signature T (the caller's promise).
    Ok(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&p) })
}
