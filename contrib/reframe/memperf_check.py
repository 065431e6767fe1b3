# A ReFrame regression check that runs memperf on every node of a system
# and judges its figures against references (ReFrame 4).
#
#   reframe -c contrib/reframe/memperf_check.py -r
#
# memperf writes its headlines as OpenMetrics text (--openmetrics); the
# performance functions read them from there, in SI units (bytes per
# second, seconds). Set the references to what your nodes should reach:
# the ones below are placeholders of the right shape, (target,
# lower_fraction, upper_fraction, unit), not figures for your machine.
# `memperf merge --reference` takes the same shape as JSON.

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import performance_function, run_after, sanity_function

_PROM = 'memperf.prom'


def _metric(family, labels):
    """A regex for one sample of `family` whose labels include `labels`."""
    inside = ''.join(f'[^}}]*{k}="{v}[^"]*"' for k, v in labels.items())
    return rf'^{family}\{{{inside}[^}}]*\}}\s+(?P<v>\S+)$'


@rfm.simple_test
class MemperfCheck(rfm.RunOnlyRegressionTest):
    descr = 'memperf: read bandwidth, DRAM latency and loaded latency of a node'
    valid_systems = ['*']
    valid_prog_environs = ['*']
    executable = 'memperf'
    num_tasks = 1
    num_tasks_per_node = 1
    tags = {'memory', 'benchmark'}
    reference = {
        '*': {
            'read_bandwidth': (40e9, -0.10, None, 'B/s'),
            'dram_latency': (150e-9, None, 0.20, 's'),
            'loaded_latency_saturated': (200e-9, None, 0.25, 's'),
        }
    }

    @run_after('init')
    def set_options(self):
        self.executable_opts = [
            'run', '--quick', '--quiet', '--only', 'bandwidth,latency,loaded-latency',
            '--openmetrics', _PROM, '-o', 'results',
        ]

    @sanity_function
    def validate(self):
        # memperf exits non-zero when a figure failed validation; the
        # exposition ends with # EOF only when it was written whole.
        return sn.all([sn.assert_eq(self.job.exitcode, 0), sn.assert_found(r'^# EOF$', _PROM)])

    @performance_function('B/s')
    def read_bandwidth(self):
        """simd on 4 KiB pages, the most threads measured."""
        family = 'memperf_read_bandwidth_bytes_per_second'
        return sn.max(sn.extractall(_metric(family, {'pages': '4k', 'kernel': 'simd'}), _PROM, 'v', float))

    @performance_function('s')
    def dram_latency(self):
        """The random chase at the largest working set, 4 KiB pages."""
        family = 'memperf_latency_random_seconds'
        return sn.max(sn.extractall(_metric(family, {'pages': '4k'}), _PROM, 'v', float))

    @performance_function('s')
    def loaded_latency_saturated(self):
        return sn.extractsingle(
            _metric('memperf_loaded_latency_saturated_latency_seconds', {}), _PROM, 'v', float
        )
