//! The C region API over memperf's Rust one (`memperf::region`), built as
//! `libmemperf.a` and `libmemperf.so`; the declarations are in
//! `include/memperf.h`. No panic crosses into C: each entry point catches
//! it and the call becomes a no-op.

use std::ffi::{c_char, c_int, CStr};

/// The region name, or `None` for a NULL pointer.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string valid for the call.
unsafe fn name<'a>(name: *const c_char) -> Option<std::borrow::Cow<'a, str>> {
    // SAFETY: not NULL here, and the caller guarantees NUL termination.
    (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) }.to_string_lossy())
}

/// Opens region `name` on the calling thread.
///
/// # Safety
/// `region` is NULL (ignored) or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn mp_region_begin(region: *const c_char) {
    // SAFETY: the caller's guarantee is `name`'s.
    if let Some(n) = unsafe { name(region) } {
        let _ = std::panic::catch_unwind(|| memperf::region::begin(&n));
    }
}

/// Closes the innermost open region `name` of the calling thread.
///
/// # Safety
/// `region` is NULL (ignored) or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn mp_region_end(region: *const c_char) {
    // SAFETY: the caller's guarantee is `name`'s.
    if let Some(n) = unsafe { name(region) } {
        let _ = std::panic::catch_unwind(|| memperf::region::end(&n));
    }
}

/// Writes the regions so far to `path` (NULL: `$MEMPERF_REGIONS`, else
/// memperf-regions.json). Returns 0, or -1 when it could not be written.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn mp_regions_write(path: *const c_char) -> c_int {
    // SAFETY: the caller's guarantee is `name`'s.
    let target = match unsafe { name(path) } {
        Some(p) => std::path::PathBuf::from(p.into_owned()),
        None => memperf::region::default_path(),
    };
    match std::panic::catch_unwind(|| memperf::region::write_document(&target)) {
        Ok(Ok(())) => 0,
        _ => -1,
    }
}
