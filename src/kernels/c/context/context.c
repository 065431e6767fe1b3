/*
 * The context saves of `memperf context`, in C because setjmp and its
 * relatives cannot be called safely from Rust (a function that returns
 * twice is outside Rust's model).
 *
 * memperf_context_run(op, reps) performs `reps` round trips of one save
 * (and, where the save has one, its restore) and returns the number of
 * round trips that came back the way they should, so the caller can check
 * that every jump landed.
 *
 * memperf_interp_run(mode, program, len, reps) runs a tiny interpreter
 * whose every operation goes through a protected call, the shape of Ruby
 * 1.8's rb_protect/EXEC_TAG: mode 0 calls the operation directly, mode 1
 * protects it with the cheapest correct save (__builtin_setjmp), mode 2
 * with a needless heavy one (sigsetjmp(env, 1), which saves the signal mask
 * through a system call). Returns the interpreter's accumulator.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <ucontext.h>

enum {
    OP_BUILTIN_SETJMP = 0,
    OP_SETJMP_UNDERSCORE = 1,
    OP_SETJMP = 2,
    OP_SIGSETJMP_NOMASK = 3,
    OP_SIGSETJMP_MASK = 4,
    OP_GETCONTEXT = 5,
    OP_SWAPCONTEXT = 6,
    OP_COUNT = 7,
};

int memperf_context_op_count(void) { return OP_COUNT; }

/* Jumps live in functions of their own, never inlined into the caller of
 * the matching save (required for __builtin_longjmp, and keeps every
 * variant's round trip the same shape: save, call, jump back). */
static __attribute__((noinline)) void jump_builtin(void **buf) { __builtin_longjmp(buf, 1); }
static __attribute__((noinline)) void jump_underscore(jmp_buf env) { _longjmp(env, 1); }
static __attribute__((noinline)) void jump_plain(jmp_buf env) { longjmp(env, 1); }
static __attribute__((noinline)) void jump_sig(sigjmp_buf env) { siglongjmp(env, 1); }

static long run_builtin(long reps) {
    void *buf[5];
    volatile long landed = 0;
    for (long i = 0; i < reps; i++) {
        if (__builtin_setjmp(buf) == 0) jump_builtin(buf);
        else landed = landed + 1;
    }
    return landed;
}

/* A round-trip loop for a library save: save into a buffer of type BUF
 * with SAVE, jump back through JUMP, count the landings. The counter lives
 * in memory (volatile): a jump back may restore registers. */
#define ROUND_TRIPS(name, BUF, SAVE, JUMP)                \
    static long name(long reps) {                         \
        BUF env;                                          \
        volatile long landed = 0;                         \
        for (volatile long i = 0; i < reps; i++) {        \
            if (SAVE == 0) JUMP(env);                     \
            else landed = landed + 1;                     \
        }                                                 \
        return landed;                                    \
    }

ROUND_TRIPS(run_underscore, jmp_buf, _setjmp(env), jump_underscore)
ROUND_TRIPS(run_plain, jmp_buf, setjmp(env), jump_plain)
ROUND_TRIPS(run_sig_nomask, sigjmp_buf, sigsetjmp(env, 0), jump_sig)
ROUND_TRIPS(run_sig_mask, sigjmp_buf, sigsetjmp(env, 1), jump_sig)

static long run_getcontext(long reps) {
    ucontext_t uc;
    long saved = 0;
    for (long i = 0; i < reps; i++) {
        if (getcontext(&uc) == 0) saved++;
        __asm__ volatile("" ::: "memory");
    }
    return saved;
}

/* swapcontext round trip: this thread -> its coroutine -> back. Contexts,
 * stack and visit count are per thread: threads run this at the same time. */
static __thread ucontext_t *t_main, *t_co;
static __thread long t_visits;
static __thread char t_stack[64 * 1024] __attribute__((aligned(64)));

static void coroutine(void) {
    for (;;) {
        t_visits++;
        swapcontext(t_co, t_main);
    }
}

static long run_swapcontext(long reps) {
    ucontext_t here, co;
    t_main = &here;
    t_co = &co;
    if (getcontext(&co) != 0) return -1;
    co.uc_stack.ss_sp = t_stack;
    co.uc_stack.ss_size = sizeof t_stack;
    co.uc_link = NULL;
    makecontext(&co, coroutine, 0);
    long start = t_visits;
    for (long i = 0; i < reps; i++) swapcontext(&here, &co);
    /* Every round trip visited the coroutine once and came back. */
    return t_visits - start;
}

long memperf_context_run(int op, long reps) {
    switch (op) {
    case OP_BUILTIN_SETJMP: return run_builtin(reps);
    case OP_SETJMP_UNDERSCORE: return run_underscore(reps);
    case OP_SETJMP: return run_plain(reps);
    case OP_SIGSETJMP_NOMASK: return run_sig_nomask(reps);
    case OP_SIGSETJMP_MASK: return run_sig_mask(reps);
    case OP_GETCONTEXT: return run_getcontext(reps);
    case OP_SWAPCONTEXT: return run_swapcontext(reps);
    default: return -1;
    }
}

/* The interpreter of the Ruby lesson. A program is a list of operations on
 * one accumulator; each runs through `protected_call`, the way Ruby 1.8 ran
 * every method call inside EXEC_TAG (a setjmp, so that an exception could
 * unwind to it). */
typedef unsigned long (*interp_op)(unsigned long acc, unsigned long arg);

/* Unsigned arithmetic: wraps, never undefined. */
static __attribute__((noinline)) unsigned long op_add(unsigned long acc, unsigned long arg) { return acc + arg; }
static __attribute__((noinline)) unsigned long op_xor(unsigned long acc, unsigned long arg) { return acc ^ arg; }
static __attribute__((noinline)) unsigned long op_mul(unsigned long acc, unsigned long arg) { return acc * (arg | 1); }
static __attribute__((noinline)) unsigned long op_shift(unsigned long acc, unsigned long arg) {
    return (acc << 1) ^ (acc >> 3) ^ arg;
}
static const interp_op OPS[4] = {op_add, op_xor, op_mul, op_shift};

typedef unsigned long (*protector)(interp_op, unsigned long, unsigned long);

static __attribute__((noinline)) unsigned long protect_none(interp_op f, unsigned long acc, unsigned long arg) {
    return f(acc, arg);
}

static __attribute__((noinline)) unsigned long protect_cheap(interp_op f, unsigned long acc, unsigned long arg) {
    void *buf[5];
    if (__builtin_setjmp(buf) != 0) return acc; /* an exception would land here */
    return f(acc, arg);
}

static __attribute__((noinline)) unsigned long protect_heavy(interp_op f, unsigned long acc, unsigned long arg) {
    sigjmp_buf env;
    if (sigsetjmp(env, 1) != 0) return acc; /* saves the signal mask: a system call */
    return f(acc, arg);
}

long memperf_interp_run(int mode, const unsigned char *program, long len, long reps) {
    protector protect = mode == 0 ? protect_none : mode == 1 ? protect_cheap : protect_heavy;
    unsigned long acc = 1;
    for (long r = 0; r < reps; r++)
        for (long i = 0; i < len; i++)
            acc = protect(OPS[program[i] & 3], acc, (unsigned long)program[i] + (unsigned long)r);
    return (long)acc;
}
