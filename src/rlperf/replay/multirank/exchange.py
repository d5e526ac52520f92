"""Global uniform sampling over sharded rows: all-to-all of indices, local gather, all-to-all of rows.

Rank r owns global rows [r * shard, (r + 1) * shard). A batch is drawn with global indices, grouped
by owner (stable sort), the per-owner counts are exchanged, then the indices, then the owners gather
and send the rows back; finally the rows are put back in draw order, since slicing a batch grouped
by owner into minibatches would bias every minibatch towards one shard. The split sizes must be
known on the host, so each call has one small device-to-host copy of N counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class ExchangeCounts:
    """Rows and indices that crossed between ranks in one call (self traffic excluded)."""

    rows_in: int  # rows this rank received from other owners
    rows_out: int  # rows this rank served to other ranks
    rows_served: int  # rows this rank gathered from its shard (for itself and for the others)

    @property
    def indices_out(self) -> int:  # one request per row received
        return self.rows_in

    @property
    def indices_in(self) -> int:
        return self.rows_out


def gather_global(shard: torch.Tensor, idx: torch.Tensor, out: torch.Tensor, *, shard_rows: int, rank: int,
                  world: int, group=None) -> ExchangeCounts:
    """Fill `out[i]` with global row `idx[i]`, wherever it lives; returns the remote traffic."""
    owner = torch.div(idx, shard_rows, rounding_mode="floor")
    order = torch.argsort(owner, stable=True)
    wanted = idx.index_select(0, order)
    send_counts = torch.bincount(owner, minlength=world)
    recv_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts, group=group)
    counts = torch.stack([send_counts, recv_counts]).cpu()
    send, recv = counts[0].tolist(), counts[1].tolist()
    asked = torch.empty(sum(recv), dtype=idx.dtype, device=idx.device)
    dist.all_to_all_single(asked, wanted, output_split_sizes=recv, input_split_sizes=send, group=group)
    served = torch.index_select(shard, 0, asked.sub_(rank * shard_rows))
    received = torch.empty((idx.shape[0], shard.shape[1]), dtype=shard.dtype, device=shard.device)
    dist.all_to_all_single(received, served, output_split_sizes=send, input_split_sizes=recv, group=group)
    out.index_copy_(0, order, received)
    return ExchangeCounts(rows_in=idx.shape[0] - send[rank], rows_out=sum(recv) - recv[rank], rows_served=sum(recv))
