//! NVIDIA's driver API, loaded at run time from `libcuda.so.1` with
//! `dlopen`: hand-written bindings for the calls [`Driver`] makes, every
//! symbol resolved when the library is opened, so a missing one is one
//! error naming it, never a panic in the middle of a run. Nothing of CUDA
//! is needed to build memperf.

use super::{Arg, Attribute, CopyOp, DevicePtr, Driver, Event, GpuError, Kernel, Stream};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

type CuResult = c_int;
type Handle = *mut c_void;

/// Every entry point memperf calls, resolved once.
#[allow(non_snake_case)]
struct Api {
    cuInit: unsafe extern "C" fn(c_uint) -> CuResult,
    cuDriverGetVersion: unsafe extern "C" fn(*mut c_int) -> CuResult,
    cuDeviceGetCount: unsafe extern "C" fn(*mut c_int) -> CuResult,
    cuDeviceGet: unsafe extern "C" fn(*mut c_int, c_int) -> CuResult,
    cuDeviceGetName: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> CuResult,
    cuDeviceGetAttribute: unsafe extern "C" fn(*mut c_int, c_int, c_int) -> CuResult,
    cuDeviceTotalMem_v2: unsafe extern "C" fn(*mut usize, c_int) -> CuResult,
    cuDevicePrimaryCtxRetain: unsafe extern "C" fn(*mut Handle, c_int) -> CuResult,
    cuDevicePrimaryCtxRelease_v2: unsafe extern "C" fn(c_int) -> CuResult,
    cuCtxSetCurrent: unsafe extern "C" fn(Handle) -> CuResult,
    cuStreamCreate: unsafe extern "C" fn(*mut Handle, c_uint) -> CuResult,
    cuStreamDestroy_v2: unsafe extern "C" fn(Handle) -> CuResult,
    cuStreamSynchronize: unsafe extern "C" fn(Handle) -> CuResult,
    cuStreamWaitEvent: unsafe extern "C" fn(Handle, Handle, c_uint) -> CuResult,
    cuMemAlloc_v2: unsafe extern "C" fn(*mut DevicePtr, usize) -> CuResult,
    cuMemFree_v2: unsafe extern "C" fn(DevicePtr) -> CuResult,
    cuMemAllocHost_v2: unsafe extern "C" fn(*mut *mut c_void, usize) -> CuResult,
    cuMemFreeHost: unsafe extern "C" fn(*mut c_void) -> CuResult,
    cuMemHostGetDevicePointer_v2: unsafe extern "C" fn(*mut DevicePtr, *mut c_void, c_uint) -> CuResult,
    cuMemcpyHtoDAsync_v2: unsafe extern "C" fn(DevicePtr, *const c_void, usize, Handle) -> CuResult,
    cuMemcpyDtoHAsync_v2: unsafe extern "C" fn(*mut c_void, DevicePtr, usize, Handle) -> CuResult,
    cuMemcpyDtoDAsync_v2: unsafe extern "C" fn(DevicePtr, DevicePtr, usize, Handle) -> CuResult,
    cuEventCreate: unsafe extern "C" fn(*mut Handle, c_uint) -> CuResult,
    cuEventRecord: unsafe extern "C" fn(Handle, Handle) -> CuResult,
    cuEventSynchronize: unsafe extern "C" fn(Handle) -> CuResult,
    cuEventElapsedTime: unsafe extern "C" fn(*mut f32, Handle, Handle) -> CuResult,
    cuEventDestroy_v2: unsafe extern "C" fn(Handle) -> CuResult,
    cuGetErrorName: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    cuMemGetAllocationGranularity: unsafe extern "C" fn(*mut usize, *const AllocationProp, c_int) -> CuResult,
    cuModuleLoadData: unsafe extern "C" fn(*mut Handle, *const c_void) -> CuResult,
    cuModuleUnload: unsafe extern "C" fn(Handle) -> CuResult,
    cuModuleGetFunction: unsafe extern "C" fn(*mut Handle, Handle, *const c_char) -> CuResult,
    #[allow(clippy::type_complexity)]
    cuLaunchKernel: unsafe extern "C" fn(
        Handle,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        Handle,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
}

/// `CUmemAllocationProp` (cuda.h): pinned device memory on one device,
/// no handle to share, no flags.
#[repr(C)]
struct AllocationProp {
    kind: c_int,
    requested_handle_types: c_int,
    location_kind: c_int,
    location_id: c_int,
    win32_handle_meta_data: *mut c_void,
    compression: u8,
    gpu_direct_rdma: u8,
    usage: u16,
    reserved: [u8; 4],
}

/// NVIDIA's driver with one device at least; why not, in one line (no
/// driver, a driver that will not start, or no device).
pub fn open_with_device() -> Result<Cuda, String> {
    let cuda = Cuda::open()?;
    match cuda.count() {
        Ok(0) => Err("the driver finds no device".into()),
        Ok(_) => Ok(cuda),
        Err(e) => Err(format!("the driver cannot count its devices ({e})")),
    }
}

/// The library this process loads NVIDIA's driver from.
pub const LIBRARY: &str = "libcuda.so.1";

impl Api {
    /// # Safety
    /// `lib` is a handle of NVIDIA's driver library.
    unsafe fn resolve(lib: Handle) -> Result<Api, String> {
        macro_rules! api {
            ($($f:ident),*) => {
                Api {
                    $($f: {
                        // SAFETY: each field's type is the C signature cuda.h gives its name.
                        unsafe { super::dl::symbol(lib, LIBRARY, stringify!($f))? }
                    },)*
                }
            };
        }
        let mut api = api!(
            cuInit,
            cuDriverGetVersion,
            cuDeviceGetCount,
            cuDeviceGet,
            cuDeviceGetName,
            cuDeviceGetAttribute,
            cuDeviceTotalMem_v2,
            cuDevicePrimaryCtxRetain,
            cuDevicePrimaryCtxRelease_v2,
            cuCtxSetCurrent,
            cuStreamCreate,
            cuStreamDestroy_v2,
            cuStreamSynchronize,
            cuStreamWaitEvent,
            cuMemAlloc_v2,
            cuMemFree_v2,
            cuMemAllocHost_v2,
            cuMemFreeHost,
            cuMemHostGetDevicePointer_v2,
            cuMemcpyHtoDAsync_v2,
            cuMemcpyDtoHAsync_v2,
            cuMemcpyDtoDAsync_v2,
            cuEventCreate,
            cuEventRecord,
            cuEventSynchronize,
            cuEventElapsedTime,
            cuEventDestroy_v2,
            cuGetErrorName,
            cuMemGetAllocationGranularity,
            cuModuleLoadData,
            cuModuleUnload,
            cuModuleGetFunction,
            cuLaunchKernel
        );
        // CUDA 12.8 gave the elapsed time a second version with the same
        // arguments, which CUDA 13's header names: it is preferred.
        // SAFETY: the same C signature as cuEventElapsedTime.
        if let Ok(v2) = unsafe { super::dl::symbol(lib, LIBRARY, "cuEventElapsedTime_v2") } {
            api.cuEventElapsedTime = v2;
        }
        Ok(api)
    }
}

/// The device in use: its ordinal and handle, its primary context, its
/// two streams, and memperf's kernels where loaded (the module and each
/// kernel's function).
struct Current {
    dev: c_int,
    stream: Handle,
    side: Handle,
    module: Handle,
    functions: Vec<(Kernel, Handle)>,
}

/// NVIDIA's driver, opened and initialised.
pub struct Cuda {
    api: Api,
    current: RefCell<Option<Current>>,
}

impl Cuda {
    /// Opens `libcuda.so.1` and initialises the driver; why not, in one
    /// line, where there is no driver or it will not start.
    pub fn open() -> Result<Cuda, String> {
        let name = std::ffi::CString::new(LIBRARY).expect("no NUL");
        // SAFETY: a NUL-terminated name; the handle is never closed, so
        // the resolved symbols stay valid for the process.
        let lib = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if lib.is_null() {
            return Err(format!("{LIBRARY} was not found: NVIDIA's driver is not installed here"));
        }
        // SAFETY: lib is NVIDIA's driver library, whose signatures Api states.
        let cuda = Cuda { api: unsafe { Api::resolve(lib)? }, current: RefCell::new(None) };
        // SAFETY: cuInit takes flags, which must be 0.
        cuda.check("cuInit", unsafe { (cuda.api.cuInit)(0) }).map_err(|e| format!("the driver did not start: {e}"))?;
        Ok(cuda)
    }

    /// `Ok` for CUDA_SUCCESS, else the call's error with its code's name.
    fn check(&self, call: &'static str, r: CuResult) -> Result<(), GpuError> {
        if r == 0 {
            return Ok(());
        }
        let mut s: *const c_char = std::ptr::null();
        // SAFETY: cuGetErrorName writes a pointer to a static string, or fails.
        let name = if unsafe { (self.api.cuGetErrorName)(r, &mut s) } == 0 && !s.is_null() {
            // SAFETY: a NUL-terminated static string of the driver.
            unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
        } else {
            "an unknown error".into()
        };
        Err(GpuError { call, code: r, name })
    }

    fn handle(&self, dev: usize) -> Result<c_int, GpuError> {
        let mut h = 0;
        // SAFETY: h is a valid out-pointer.
        self.check("cuDeviceGet", unsafe { (self.api.cuDeviceGet)(&mut h, dev as c_int) })?;
        Ok(h)
    }

    /// Stream `s` of the device in use (the null stream where none is).
    fn stream(&self, s: Stream) -> Handle {
        self.current.borrow().as_ref().map_or(std::ptr::null_mut(), |c| match s {
            Stream::Main => c.stream,
            Stream::Side => c.side,
        })
    }
}

impl Driver for Cuda {
    fn version(&self) -> Result<u32, GpuError> {
        let mut v = 0;
        // SAFETY: v is a valid out-pointer.
        self.check("cuDriverGetVersion", unsafe { (self.api.cuDriverGetVersion)(&mut v) })?;
        Ok(v.max(0) as u32)
    }

    fn count(&self) -> Result<usize, GpuError> {
        let mut n = 0;
        // SAFETY: n is a valid out-pointer.
        self.check("cuDeviceGetCount", unsafe { (self.api.cuDeviceGetCount)(&mut n) })?;
        Ok(n.max(0) as usize)
    }

    fn name(&self, dev: usize) -> Result<String, GpuError> {
        let h = self.handle(dev)?;
        let mut buf = [0 as c_char; 256];
        // SAFETY: the buffer holds 256 bytes, its length passed.
        self.check("cuDeviceGetName", unsafe { (self.api.cuDeviceGetName)(buf.as_mut_ptr(), 256, h) })?;
        buf[255] = 0;
        // SAFETY: NUL-terminated within the buffer (its last byte at least).
        Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
    }

    fn attribute(&self, dev: usize, a: Attribute) -> Result<i64, GpuError> {
        let h = self.handle(dev)?;
        let mut v = 0;
        // SAFETY: v is a valid out-pointer; a is a CUdevice_attribute.
        self.check("cuDeviceGetAttribute", unsafe { (self.api.cuDeviceGetAttribute)(&mut v, a as c_int, h) })?;
        Ok(v as i64)
    }

    fn total_memory(&self, dev: usize) -> Result<u64, GpuError> {
        let h = self.handle(dev)?;
        let mut v = 0usize;
        // SAFETY: v is a valid out-pointer.
        self.check("cuDeviceTotalMem_v2", unsafe { (self.api.cuDeviceTotalMem_v2)(&mut v, h) })?;
        Ok(v as u64)
    }

    fn page_bytes(&self, dev: usize) -> Result<u64, GpuError> {
        let prop = AllocationProp {
            kind: 1,
            requested_handle_types: 0,
            location_kind: 1,
            location_id: self.handle(dev)?,
            win32_handle_meta_data: std::ptr::null_mut(),
            compression: 0,
            gpu_direct_rdma: 0,
            usage: 0,
            reserved: [0; 4],
        };
        let mut v = 0usize;
        // SAFETY: a valid out-pointer and a CUmemAllocationProp laid out as
        // cuda.h declares it; 0 asks for the minimum granularity.
        self.check("cuMemGetAllocationGranularity", unsafe {
            (self.api.cuMemGetAllocationGranularity)(&mut v, &prop, 0)
        })?;
        Ok(v as u64)
    }

    fn use_device(&self, dev: usize) -> Result<(), GpuError> {
        self.release();
        let h = self.handle(dev)?;
        let mut ctx = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the context is released in `release`.
        self.check("cuDevicePrimaryCtxRetain", unsafe { (self.api.cuDevicePrimaryCtxRetain)(&mut ctx, h) })?;
        let (mut stream, mut side) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: the context just retained; flag 1 is CU_STREAM_NON_BLOCKING,
        // and the streams are destroyed in `release`.
        let made = unsafe {
            self.check("cuCtxSetCurrent", (self.api.cuCtxSetCurrent)(ctx))
                .and_then(|_| self.check("cuStreamCreate", (self.api.cuStreamCreate)(&mut stream, 1)))
                .and_then(|_| self.check("cuStreamCreate", (self.api.cuStreamCreate)(&mut side, 1)))
        };
        if let Err(e) = made {
            // SAFETY: the retain above succeeded and is given back once,
            // the context no longer current; a stream made is destroyed.
            unsafe {
                if !stream.is_null() {
                    (self.api.cuStreamDestroy_v2)(stream);
                }
                (self.api.cuCtxSetCurrent)(std::ptr::null_mut());
                (self.api.cuDevicePrimaryCtxRelease_v2)(h);
            }
            return Err(e);
        }
        *self.current.borrow_mut() =
            Some(Current { dev: h, stream, side, module: std::ptr::null_mut(), functions: vec![] });
        Ok(())
    }

    fn release(&self) {
        if let Some(c) = self.current.borrow_mut().take() {
            // SAFETY: the stream, module and primary context this object
            // made current, each given back once.
            unsafe {
                if !c.module.is_null() {
                    (self.api.cuModuleUnload)(c.module);
                }
                (self.api.cuStreamDestroy_v2)(c.stream);
                (self.api.cuStreamDestroy_v2)(c.side);
                (self.api.cuCtxSetCurrent)(std::ptr::null_mut());
                (self.api.cuDevicePrimaryCtxRelease_v2)(c.dev);
            }
        }
    }

    fn alloc(&self, bytes: usize) -> Result<DevicePtr, GpuError> {
        let mut p = 0;
        // SAFETY: p is a valid out-pointer.
        self.check("cuMemAlloc_v2", unsafe { (self.api.cuMemAlloc_v2)(&mut p, bytes) })?;
        Ok(p)
    }

    fn free(&self, p: DevicePtr) {
        // SAFETY: p came from cuMemAlloc_v2 in this context.
        unsafe { (self.api.cuMemFree_v2)(p) };
    }

    fn alloc_pinned(&self, bytes: usize) -> Result<*mut u8, GpuError> {
        let mut p = std::ptr::null_mut();
        // SAFETY: p is a valid out-pointer.
        self.check("cuMemAllocHost_v2", unsafe { (self.api.cuMemAllocHost_v2)(&mut p, bytes) })?;
        Ok(p as *mut u8)
    }

    fn free_pinned(&self, p: *mut u8) {
        // SAFETY: p came from cuMemAllocHost_v2.
        unsafe { (self.api.cuMemFreeHost)(p as *mut c_void) };
    }

    /// The driver's mapping of `p` (on a device with unified addressing,
    /// `cuMemAllocHost`'s memory is mapped at the host's address).
    fn mapped(&self, p: *mut u8) -> Result<DevicePtr, GpuError> {
        let mut d = 0;
        // SAFETY: a valid out-pointer; p is pinned memory of this driver
        // (flags must be 0).
        self.check("cuMemHostGetDevicePointer_v2", unsafe {
            (self.api.cuMemHostGetDevicePointer_v2)(&mut d, p as *mut c_void, 0)
        })?;
        Ok(d)
    }

    unsafe fn copy_on(&self, s: Stream, op: CopyOp) -> Result<(), GpuError> {
        let s = self.stream(s);
        // SAFETY: the caller keeps the host memory alive until the stream
        // has passed the copy; device pointers came from cuMemAlloc_v2.
        unsafe {
            match op {
                CopyOp::HostToDevice { dst, src, bytes } => self.check(
                    "cuMemcpyHtoDAsync_v2",
                    (self.api.cuMemcpyHtoDAsync_v2)(dst, src as *const c_void, bytes, s),
                ),
                CopyOp::DeviceToHost { dst, src, bytes } => self
                    .check("cuMemcpyDtoHAsync_v2", (self.api.cuMemcpyDtoHAsync_v2)(dst as *mut c_void, src, bytes, s)),
                CopyOp::DeviceToDevice { dst, src, bytes } => {
                    self.check("cuMemcpyDtoDAsync_v2", (self.api.cuMemcpyDtoDAsync_v2)(dst, src, bytes, s))
                }
            }
        }
    }

    fn record_on(&self, s: Stream) -> Result<Event, GpuError> {
        let mut e = std::ptr::null_mut();
        // SAFETY: flag 0 is CU_EVENT_DEFAULT (timed); e is destroyed in
        // elapsed_ms or discard, or here where it could not be recorded.
        unsafe {
            self.check("cuEventCreate", (self.api.cuEventCreate)(&mut e, 0))?;
            if let Err(err) = self.check("cuEventRecord", (self.api.cuEventRecord)(e, self.stream(s))) {
                (self.api.cuEventDestroy_v2)(e);
                return Err(err);
            }
        }
        Ok(Event(e as usize))
    }

    fn elapsed_ms(&self, from: Event, to: Event) -> Result<f64, GpuError> {
        let (a, b) = (from.0 as Handle, to.0 as Handle);
        let mut ms = 0f32;
        // SAFETY: both events were created and recorded by `record`; each
        // is destroyed once, here.
        let r = unsafe {
            self.check("cuEventSynchronize", (self.api.cuEventSynchronize)(b))
                .and_then(|_| self.check("cuEventElapsedTime", (self.api.cuEventElapsedTime)(&mut ms, a, b)))
        };
        // SAFETY: as above.
        unsafe {
            (self.api.cuEventDestroy_v2)(a);
            (self.api.cuEventDestroy_v2)(b);
        }
        r.map(|_| ms as f64)
    }

    fn discard(&self, e: Event) {
        // SAFETY: an event `record` made, destroyed once (Event is not Clone).
        unsafe { (self.api.cuEventDestroy_v2)(e.0 as Handle) };
    }

    fn wait_for(&self, s: Stream, e: &Event) -> Result<(), GpuError> {
        // SAFETY: a stream this object made and an event `record` made
        // and recorded (flags must be 0).
        self.check("cuStreamWaitEvent", unsafe { (self.api.cuStreamWaitEvent)(self.stream(s), e.0 as Handle, 0) })
    }

    fn synchronize(&self) -> Result<(), GpuError> {
        [Stream::Main, Stream::Side].into_iter().try_for_each(|s| {
            // SAFETY: a stream this object made (or the null stream).
            self.check("cuStreamSynchronize", unsafe { (self.api.cuStreamSynchronize)(self.stream(s)) })
        })
    }

    fn load_kernels(&self, major: u32, minor: u32) -> Result<(), GpuError> {
        let mut current = self.current.borrow_mut();
        let Some(c) = current.as_mut() else {
            return Err(GpuError { call: "cuModuleLoadData", code: 0, name: "no device in use".into() });
        };
        if c.module.is_null() {
            let image =
                super::nvrtc::compile(major, minor).map_err(|why| GpuError { call: "NVRTC", code: 0, name: why })?;
            let mut module = std::ptr::null_mut();
            // SAFETY: a cubin or NUL-terminated PTX; the module is unloaded in `release`.
            self.check("cuModuleLoadData", unsafe { (self.api.cuModuleLoadData)(&mut module, image.as_ptr().cast()) })?;
            c.module = module;
        }
        c.functions.clear();
        for k in Kernel::ALL {
            let name = std::ffi::CString::new(k.function()).expect("no NUL");
            let mut f = std::ptr::null_mut();
            // SAFETY: a loaded module and a NUL-terminated name.
            self.check("cuModuleGetFunction", unsafe {
                (self.api.cuModuleGetFunction)(&mut f, c.module, name.as_ptr())
            })?;
            c.functions.push((k, f));
        }
        Ok(())
    }

    unsafe fn launch_on(&self, s: Stream, k: Kernel, grid: u32, block: u32, args: &[Arg]) -> Result<(), GpuError> {
        let stream = self.stream(s);
        let current = self.current.borrow();
        let f = current.as_ref().and_then(|c| c.functions.iter().find(|(x, _)| *x == k)).map(|&(_, f)| f);
        let Some(f) = f else {
            return Err(GpuError { call: "cuLaunchKernel", code: 0, name: "the kernels are not loaded".into() });
        };
        // The driver takes a pointer to each argument's value.
        let mut values: Vec<u64> = args
            .iter()
            .map(|a| match *a {
                Arg::Ptr(p) => p,
                Arg::F64(x) => x.to_bits(),
                Arg::U64(n) => n,
            })
            .collect();
        let mut params: Vec<*mut c_void> = values.iter_mut().map(|v| (v as *mut u64).cast()).collect();
        // SAFETY: a function of the loaded module; every argument is eight
        // bytes (a pointer, a double or an unsigned long long), as
        // kernels.cu declares them, and `values` outlives the call (the
        // driver copies the arguments when it queues the launch).
        self.check("cuLaunchKernel", unsafe {
            (self.api.cuLaunchKernel)(f, grid, 1, 1, block, 1, 1, 0, stream, params.as_mut_ptr(), std::ptr::null_mut())
        })
    }
}

impl Drop for Cuda {
    fn drop(&mut self) {
        self.release();
    }
}
