//! NVRTC, CUDA's run-time compiler, loaded with `dlopen` like the driver:
//! it turns `kernels.cu` into machine code for the device's compute
//! capability (a cubin, which no driver-side compiler need accept), or,
//! where it cannot, into PTX, which the driver compiles when it loads it.
//! Where NVRTC is not installed the kernels are not measured, and the
//! outcome says which library was missing.

use std::ffi::{c_char, c_int, c_void, CStr, CString};

type Handle = *mut c_void;

/// The names NVRTC's library goes by, newest first: CUDA 13's and 12's
/// sonames, then the development link.
pub const LIBRARIES: [&str; 3] = ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];

/// memperf's kernels, as source.
pub const SOURCE: &str = include_str!("kernels.cu");

#[allow(non_snake_case)]
struct Api {
    nvrtcCreateProgram: unsafe extern "C" fn(
        *mut Handle,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int,
    nvrtcCompileProgram: unsafe extern "C" fn(Handle, c_int, *const *const c_char) -> c_int,
    nvrtcGetPTXSize: unsafe extern "C" fn(Handle, *mut usize) -> c_int,
    nvrtcGetPTX: unsafe extern "C" fn(Handle, *mut c_char) -> c_int,
    nvrtcGetProgramLogSize: unsafe extern "C" fn(Handle, *mut usize) -> c_int,
    nvrtcGetProgramLog: unsafe extern "C" fn(Handle, *mut c_char) -> c_int,
    nvrtcDestroyProgram: unsafe extern "C" fn(*mut Handle) -> c_int,
    /// Machine code (NVRTC 11.1 on); `None` where the library lacks them.
    cubin: Option<(Take, Get)>,
}

type Take = unsafe extern "C" fn(Handle, *mut usize) -> c_int;
type Get = unsafe extern "C" fn(Handle, *mut c_char) -> c_int;

fn open() -> Result<Api, String> {
    let lib = LIBRARIES
        .iter()
        .map(|name| {
            let c = CString::new(*name).expect("no NUL");
            // SAFETY: a NUL-terminated name; the handle is never closed.
            unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) }
        })
        .find(|h| !h.is_null())
        .ok_or_else(|| format!("NVRTC was not found ({}): install CUDA's run-time compiler", LIBRARIES.join(", ")))?;
    // SAFETY: the signature nvrtc.h gives nvrtcGetCUBINSize.
    let size = unsafe { super::dl::symbol::<Take>(lib, "NVRTC", "nvrtcGetCUBINSize") };
    // SAFETY: the signature nvrtc.h gives nvrtcGetCUBIN.
    let get = unsafe { super::dl::symbol::<Get>(lib, "NVRTC", "nvrtcGetCUBIN") };
    let cubin = size.ok().zip(get.ok());
    macro_rules! api {
        ($($f:ident),*) => {
            Api {
                cubin,
                $($f: {
                    // SAFETY: each field's type is the C signature nvrtc.h gives its name.
                    unsafe { super::dl::symbol(lib, "NVRTC", stringify!($f))? }
                },)*
            }
        };
    }
    Ok(api!(
        nvrtcCreateProgram,
        nvrtcCompileProgram,
        nvrtcGetPTXSize,
        nvrtcGetPTX,
        nvrtcGetProgramLogSize,
        nvrtcGetProgramLog,
        nvrtcDestroyProgram
    ))
}

/// `kernels.cu` compiled for compute capability `major.minor`: a cubin
/// where NVRTC makes one, else PTX (NUL-terminated, as the driver takes
/// it); why not, in one line.
pub fn compile(major: u32, minor: u32) -> Result<Vec<u8>, String> {
    let api = open()?;
    if let Some((size, get)) = api.cubin {
        if let Ok(image) = build(&api, &format!("sm_{major}{minor}"), &|prog| take(prog, size, get, "CUBIN")) {
            return Ok(image);
        }
    }
    let (size, get) = (api.nvrtcGetPTXSize, api.nvrtcGetPTX);
    build(&api, &format!("compute_{major}{minor}"), &|prog| take(prog, size, get, "PTX"))
}

/// The source compiled for `arch`, and what `take` makes of the program.
fn build(api: &Api, arch: &str, take: &dyn Fn(Handle) -> Result<Vec<u8>, String>) -> Result<Vec<u8>, String> {
    let source = CString::new(SOURCE).expect("no NUL in the kernels' source");
    let name = CString::new("memperf_kernels.cu").expect("no NUL");
    let mut prog: Handle = std::ptr::null_mut();
    // SAFETY: valid out-pointer and NUL-terminated strings; no headers.
    let r = unsafe {
        (api.nvrtcCreateProgram)(&mut prog, source.as_ptr(), name.as_ptr(), 0, std::ptr::null(), std::ptr::null())
    };
    if r != 0 {
        return Err(format!("nvrtcCreateProgram failed ({r})"));
    }
    let options = [format!("--gpu-architecture={arch}"), "--std=c++17".into()];
    let options: Vec<CString> = options.into_iter().map(|o| CString::new(o).expect("no NUL")).collect();
    let pointers: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: prog was created above; the options outlive the call.
    let compiled = unsafe { (api.nvrtcCompileProgram)(prog, pointers.len() as c_int, pointers.as_ptr()) };
    let out = if compiled == 0 {
        take(prog)
    } else {
        Err(format!("NVRTC could not compile the kernels for {arch}: {}", log(api, prog)))
    };
    // SAFETY: prog was created above and is destroyed once.
    unsafe { (api.nvrtcDestroyProgram)(&mut prog) };
    out
}

/// The compiled image, through its size and getter (`what` names it).
fn take(prog: Handle, size_of: Take, get: Get, what: &str) -> Result<Vec<u8>, String> {
    let mut size = 0usize;
    // SAFETY: a compiled program and a valid out-pointer.
    if unsafe { size_of(prog, &mut size) } != 0 || size == 0 {
        return Err(format!("nvrtcGet{what}Size failed"));
    }
    let mut buf = vec![0u8; size];
    // SAFETY: buf holds the size NVRTC gave (PTX's NUL included).
    if unsafe { get(prog, buf.as_mut_ptr() as *mut c_char) } != 0 {
        return Err(format!("nvrtcGet{what} failed"));
    }
    Ok(buf)
}

/// The compiler's log, its first line.
fn log(api: &Api, prog: Handle) -> String {
    let mut size = 0usize;
    // SAFETY: a program and a valid out-pointer.
    if unsafe { (api.nvrtcGetProgramLogSize)(prog, &mut size) } != 0 || size == 0 {
        return "no log".into();
    }
    let mut buf = vec![0 as c_char; size];
    // SAFETY: buf holds the size NVRTC gave, its NUL included.
    if unsafe { (api.nvrtcGetProgramLog)(prog, buf.as_mut_ptr()) } != 0 {
        return "no log".into();
    }
    buf[size - 1] = 0;
    // SAFETY: NUL-terminated within buf.
    let text = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("no log").trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel the driver looks up is defined in the source, with C
    /// linkage (the names the launches use).
    #[test]
    fn every_kernel_is_in_the_source_with_c_linkage() {
        for k in crate::gpu::Kernel::ALL {
            let decl = format!("extern \"C\" __global__ void {}(", k.function());
            assert!(SOURCE.contains(&decl), "{decl}");
        }
    }

    /// CUDA's names, declared for a C compiler: enough to check the
    /// kernels' syntax and types where no CUDA compiler is.
    const HOST_PRELUDE: &str = "#define __global__\n#define __device__\n#define __shared__ static\n\
        struct memperf_dim3 { unsigned int x, y, z; };\n\
        typedef struct { unsigned long long x, y; } ulonglong2;\n\
        static struct memperf_dim3 blockIdx, blockDim, threadIdx, gridDim;\n\
        void __syncthreads(void);\nlong long clock64(void);\n\
        unsigned long long __ldcg(const unsigned long long *);\nvoid __threadfence(void);\n\
        unsigned long long atomicAdd(unsigned long long *, unsigned long long);\n#line 1 \"kernels.cu\"\n";

    /// The kernels parse and type-check as C (their `extern "C"` aside)
    /// with the system's compiler: a slip in them fails here, not first
    /// on a machine with a GPU.
    #[test]
    fn the_kernels_parse_as_c() {
        use std::io::Write;
        let src = format!("{HOST_PRELUDE}{}", SOURCE.replace("extern \"C\" ", ""));
        let mut cc = std::process::Command::new("cc")
            .args(["-fsyntax-only", "-std=gnu11", "-Wall", "-Werror", "-Wno-unused-function", "-x", "c", "-"])
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("cc runs");
        cc.stdin.take().unwrap().write_all(src.as_bytes()).unwrap();
        let out = cc.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
}
