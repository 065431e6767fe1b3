/*
 * memperf.h: counters around named regions of your own code.
 *
 *     #include <memperf.h>
 *     mp_region_begin("doit");
 *     doit();
 *     mp_region_end("doit");
 *
 * Link with -lmemperf (libmemperf.a or libmemperf.so, from
 * `cargo build --release -p memperf-capi`, in target/release/). Static
 * linking also needs -lpthread -ldl -lm.
 *
 * Regions nest and repeat (counts accumulate per name) and work from any
 * number of threads. At exit the totals are written as a memperf result
 * document to $MEMPERF_REGIONS, else memperf-regions.json; `memperf report`
 * and `memperf compare` read it. Events: $MEMPERF_EVENTS (as `memperf stat
 * -e`), else cycles, instructions, page walks, task-clock, page faults.
 * An event the machine cannot count is recorded as "not measured" with the
 * reason, never as 0.
 */
#ifndef MEMPERF_H
#define MEMPERF_H

#ifdef __cplusplus
extern "C" {
#endif

/* Opens region `name` on the calling thread. */
void mp_region_begin(const char *name);

/* Closes the innermost open region `name` of the calling thread; an end
 * without its begin is ignored. */
void mp_region_end(const char *name);

/* Writes the regions so far now (NULL: the default path). 0, or -1 when the
 * document could not be written. */
int mp_regions_write(const char *path);

#ifdef __cplusplus
}
#endif

#endif
