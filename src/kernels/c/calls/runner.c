/* Runs a chain `reps` times at one depth and returns the sum of what the
 * chain returned (reps × depth when every call returned its depth). The
 * function pointer keeps the outer call opaque, so every variant pays the
 * same outer call. */
typedef long (*memperf_chain_fn)(long);

long memperf_chain_run(memperf_chain_fn first, long depth, long reps) {
    long sum = 0;
    for (long i = 0; i < reps; i++) {
        sum += first(depth);
        __asm__ volatile("" : "+r"(sum));
    }
    return sum;
}
