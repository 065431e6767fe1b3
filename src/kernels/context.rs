//! The context saves of `memperf context` (C, src/kernels/c/context/context.c):
//! each operation is a save and the jump back to it (or, for `getcontext`,
//! the save alone; for `swapcontext`, a round trip to a coroutine and
//! back), and the interpreter of the Ruby lesson, whose every operation
//! runs through a protected call.

pub use memperf_model::kernels::context::{Protection, SaveOp};

extern "C" {
    fn memperf_context_run(op: i32, reps: i64) -> i64;
    fn memperf_interp_run(mode: i32, program: *const u8, len: i64, reps: i64) -> i64;
}

/// Runs `reps` round trips of `op`; returns how many came back as they
/// should (`reps` when all did).
pub fn run(op: SaveOp, reps: u64) -> i64 {
    // SAFETY: the C side only touches its own stack and thread-local
    // state; every jump lands in the function that saved (context.c).
    unsafe { memperf_context_run(index(op), reps as i64) }
}

/// The operation's number in the C enum (the order of [`SaveOp::ALL`]).
fn index(op: SaveOp) -> i32 {
    SaveOp::ALL.iter().position(|&o| o == op).expect("listed") as i32
}

/// The interpreter's program: `len` operations from a fixed pattern.
pub fn program(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + 3) as u8).collect()
}

/// Runs the program `reps` times with each operation protected as `p`;
/// returns the accumulator (the same for every protection).
pub fn interpret(p: Protection, program: &[u8], reps: u64) -> i64 {
    let mode = Protection::ALL.iter().position(|&x| x == p).expect("listed") as i32;
    // SAFETY: program is valid for len bytes; the C side reads only them.
    unsafe { memperf_interp_run(mode, program.as_ptr(), program.len() as i64, reps as i64) }
}

/// The interpreter in Rust, for validation: the accumulator the C side must
/// return whatever the protection.
pub fn interpret_reference(program: &[u8], reps: u64) -> i64 {
    let mut acc: u64 = 1;
    for r in 0..reps {
        for &b in program {
            let arg = (b as u64).wrapping_add(r);
            acc = match b & 3 {
                0 => acc.wrapping_add(arg),
                1 => acc ^ arg,
                2 => acc.wrapping_mul(arg | 1),
                _ => (acc << 1) ^ (acc >> 3) ^ arg,
            };
        }
    }
    acc as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" {
        fn memperf_context_op_count() -> i32;
    }

    #[test]
    fn the_c_side_knows_every_op() {
        // SAFETY: a constant getter.
        assert_eq!(unsafe { memperf_context_op_count() } as usize, SaveOp::ALL.len());
    }

    #[test]
    fn every_round_trip_lands() {
        for op in SaveOp::ALL {
            assert_eq!(run(op, 1000), 1000, "{op}");
        }
    }

    #[test]
    fn threads_save_at_the_same_time() {
        std::thread::scope(|s| {
            let h: Vec<_> = (0..2).map(|_| s.spawn(|| run(SaveOp::Swapcontext, 20_000))).collect();
            for h in h {
                assert_eq!(h.join().unwrap(), 20_000);
            }
        });
    }

    #[test]
    fn every_protection_computes_the_same_thing() {
        let prog = program(64);
        let want = interpret_reference(&prog, 50);
        for p in Protection::ALL {
            assert_eq!(interpret(p, &prog, 50), want, "{p:?}");
        }
    }

    #[test]
    fn names_parse_and_the_document_spells_them_alike() {
        for op in SaveOp::ALL {
            assert_eq!(SaveOp::parse(op.name()).unwrap(), op);
            assert_eq!(serde_json::to_value(op).unwrap(), op.name());
        }
        assert!(SaveOp::parse("vfork").unwrap_err().message.contains("sigsetjmp-1"));
    }
}
