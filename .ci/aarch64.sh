# The aarch64 build, sourced by .ci/run: Debian's cross toolchain and
# qemu-user, rustup's aarch64 std, then the aarch64 tests, linted by
# clippy as they build, under qemu (the runner in .cargo/config.toml).
#
# The library's tests run once per emulated CPU that covers a code path:
# SVE at its smallest and largest vector lengths (128 and 2048 bits: the
# kernels are length-agnostic, so the lengths between take no path these
# do not), and a Cortex-A72 without SVE (NEON) (QEMU_CPU picks qemu's -cpu).
# All of them on SVE 128 (but the whole-command run of every kernel, whose
# 128-bit loops the kernels:: tests cover); on the other two, the modules whose code differs
# between SVE lengths and NEON (the kernels, the machine probe's reading of
# the vector length and features, info, and every kernel run whole by
# cli::emulated); the rest of the aarch64 code (the
# clock, the counters, the fault targets) is the same on all three.
# Left out: what qemu-user does not emulate (mbind, perf_event_open,
# hugetlb mappings and SysV huge-page segments fail there with ENOSYS or
# EINVAL), which the x86-64 run tests.

AARCH64=aarch64-unknown-linux-gnu

aarch64_setup() {
  local missing=()
  command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || missing+=(gcc-aarch64-linux-gnu)
  [ -e /usr/aarch64-linux-gnu/lib/libc.so.6 ] || missing+=(libc6-dev-arm64-cross)
  command -v qemu-aarch64 >/dev/null 2>&1 || missing+=(qemu-user)
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
      echo "error: ${missing[*]} missing and not root with apt: the aarch64 step cannot run" >&2
      return 1
    fi
  fi
  rustup target list --installed 2>/dev/null | grep -qx "$AARCH64" || rustup target add "$AARCH64" >/dev/null
}

aarch64_check() {
  # No debug info in the emulated builds (.ci/run exports it for every
  # build; this keeps the step right when sourced alone).
  export CARGO_PROFILE_TEST_DEBUG=0 CARGO_PROFILE_DEV_DEBUG=0
  local skips=(--skip memory::numa --skip experiments::numa --skip memory::tests::hugetlb --skip memory::tests::shm
    --skip counters::tests::page_faults_of_a_known_touch_pattern
    --skip experiments::stat::tests::page_faults_of_a_child_that_touches_known_pages
    --skip region::tests::regions_nest_repeat_and_count_across_threads)
  # memperf itself at level 3, as the test profile has it: its disassembly
  # tests read the kernels (at level 1 the NEON loop calls out); what it
  # depends on at level 1, since under qemu nothing is timed (the build
  # took 376 s instead of 458 s on the Zen 3 guest), and memperf-model
  # unoptimised, as Cargo.toml has it. Every cargo call below passes the
  # same options, or it would build again. Only memperf's tests: the
  # model's hold no code of an architecture, and the x86-64 run has them.
  # Sixteen codegen units, not Cargo.toml's one: here the harness is the
  # only build of memperf, and one unit would leave a core idle
  # (docs/validation.md).
  local level=(--config 'profile.test.opt-level=1' --config 'profile.test.package.memperf.opt-level=3'
    --config 'profile.test.package.memperf.codegen-units=16' -p memperf)
  # Clippy lints the aarch64 code inside that one build: clippy-driver
  # wraps rustc for the workspace's crates (as `cargo clippy` does) while
  # they compile, with warnings denied for the target. Every line of code
  # an architecture selects is in memperf's library, which the harness
  # compiles whole (its tests included); the other targets (the binary,
  # the integration tests, the C API, the model) select none, and the
  # x86-64 clippy lints them. A separate `cargo clippy --target` would
  # check the same code a second time (80-90 s; docs/validation.md).
  local lint=(env "RUSTC_WORKSPACE_WRAPPER=$(rustup which clippy-driver)"
    "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS=-D warnings")
  # One build: the library's test harness, which also runs whole commands
  # (cli::emulated), so no second build of the library for a binary.
  "${lint[@]}" cargo test -q "${level[@]}" --target "$AARCH64" --lib --no-run
  # Whole commands: every kernel end to end on SVE 2048 and NEON (SVE 128's
  # kernels are the kernels:: tests'), prefetch-fault and the emulation
  # notice on SVE 128.
  local cpu only=() once=(--skip cli::emulated::every_kernel)
  for cpu in max,sve-default-vector-length=16 max,sve-default-vector-length=256 cortex-a72; do
    echo "aarch64 library tests on qemu -cpu $cpu${only[*]:+ (${only[*]})}"
    QEMU_CPU="$cpu" "${lint[@]}" cargo test -q "${level[@]}" --target "$AARCH64" --lib -- "${only[@]}" "${skips[@]}" "${once[@]}" 2>&1 | grep -E "^test result|FAILED|panicked"
    [ "${PIPESTATUS[0]}" = 0 ] || return 1
    only=(kernels:: machine:: experiments::info cli::emulated::every_kernel)
    once=()
  done
}
