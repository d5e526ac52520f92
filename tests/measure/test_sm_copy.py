"""The SM copy kernel (a second witness for the device-copy ceiling) copies every byte and refuses what it cannot."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.gpu


@pytest.fixture
def cuda():
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    pytest.importorskip("cupy")
    return torch.device("cuda", 0)


@pytest.mark.parametrize("unroll", [2, 4, 8])
def test_every_byte_is_copied_including_a_ragged_last_tile(cuda, unroll):
    from rlperf.measure.sm_copy import sm_copy

    src = torch.randint(0, 2**31 - 1, (256 * unroll * 4 + 12,), dtype=torch.int32, device=cuda)  # not whole tiles
    dst = torch.zeros_like(src)
    sm_copy(dst, src, unroll=unroll)
    torch.cuda.synchronize()
    assert torch.equal(dst, src)


def test_unequal_or_misaligned_buffers_are_refused(cuda):
    from rlperf.measure.sm_copy import sm_copy

    a = torch.zeros(64, dtype=torch.int32, device=cuda)
    with pytest.raises(ValueError):
        sm_copy(a[:32], a[32:48])
    with pytest.raises(ValueError):
        sm_copy(a[1:5], a[8:12])
    with pytest.raises(ValueError):
        sm_copy(a[:4], a[4:8], unroll=3)
