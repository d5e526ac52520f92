"""envs.base: the shared workload pieces (first-call compile timing, the chunked workloads' properties)."""

import pytest

from rlperf.envs.base import first_call_seconds
from rlperf.envs.registry import get


class FakeKernel:
    """Stands for a Numba dispatcher: records the thread count it ran at, gains signatures as told."""

    def __init__(self, signatures):
        self.signatures, self._after, self.ran_at = [], signatures, None

    def __call__(self, *args):
        import numba

        self.ran_at = (numba.get_num_threads(), args)
        self.signatures = list(self._after)


def test_first_call_runs_once_at_one_thread_and_refuses_a_second_specialisation():
    import numba

    before = numba.get_num_threads()
    kernel = FakeKernel(["f8[:]"])
    assert first_call_seconds(kernel, (1, 2), "walk: kernel") >= 0
    assert kernel.ran_at == (1, (1, 2)) and numba.get_num_threads() == before
    with pytest.raises(RuntimeError, match="walk: kernel has 2 specialisations"):
        first_call_seconds(FakeKernel(["f8[:]", "f4[:]"]), (), "walk: kernel")
    assert numba.get_num_threads() == before


@pytest.mark.parametrize("task", ["g1_walk_flat", "probe"])
def test_chunked_workloads_take_terms_from_their_inputs_and_tolerances_by_name(task):
    import importlib

    from rlperf.envs import tolerances

    workload = get(task)
    assert workload.terms == importlib.import_module(workload._inputs).TERMS and workload.terms
    assert workload.tolerances == tolerances.load(task)
