"""Storage: where replay rows live (host pageable, host pinned, device) and how they are written and read.

One write path for collectors and benchmarks alike (docs/workloads.md A2): `add` writes one vector env
step, wrapping at capacity, with the terminal patch; `add_rows` writes encoded rows (the benchmark
prefill goes through it too). `gather(indices, out)` writes batch rows (every field, the layout's
dtypes) into `out`; `decode` turns them into named fp32 or bf16 views for the learner.

Tables are float32 *words* `(capacity, stored_width)`: fields of other dtypes are byte views into
them, and a gather of a packed fp32 layout is the same `index_select` on the same table as ever.

With next-obs elision a row stores obs once: next_obs of row i is obs of row (i + N) mod capacity,
N = rows per step (capacity must be a multiple of N), and rows whose step was a terminal step get
their final observations from a terminal table. The newest step has no successor yet, so it is not
sampleable; every layout excludes it, so batches of all layouts stay comparable.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from rlperf.replay.huge_pages import advise_huge_pages
from rlperf.replay.layouts import Field, StorageLayout
from rlperf.row_layout import FIELD_ORDER, SCALAR_FIELDS, RowLayout

STORAGE_KINDS = ("host", "host-pinned", "device")
TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "uint8": torch.uint8}
PREFILL_CHUNK_ROWS = 2**16


class Batch(NamedTuple):
    obs: torch.Tensor
    next_obs: torch.Tensor
    actions: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    truncated: torch.Tensor
    critic: torch.Tensor
    next_critic: torch.Tensor


def field_view(rows: torch.Tensor, f: Field) -> torch.Tensor:
    """`f`'s columns of word rows `(n, words)` in its own dtype (a view, no copy)."""
    return rows.view(torch.uint8)[:, f.offset: f.stop].view(TORCH_DTYPES[f.dtype])


class Storage:
    """A ring of `capacity` rows of `layout` with a monotonic write pointer (`ptr`, never wrapped)."""

    def __init__(self, layout: StorageLayout, capacity_rows: int, *, kind: str = "host",
                 device: str | torch.device | None = None, step_rows: int = 1, terminal_rows: int | None = None):
        if kind not in STORAGE_KINDS:
            raise ValueError(f"unknown storage kind {kind!r}; valid: {', '.join(STORAGE_KINDS)}")
        if capacity_rows <= 0 or step_rows <= 0:
            raise ValueError(f"capacity and step_rows must be positive, got {capacity_rows}, {step_rows}")
        if layout.elide_next and capacity_rows % step_rows:
            raise ValueError(f"next-obs elision needs capacity ({capacity_rows:,}) to be a multiple of the rows per "
                             f"step ({step_rows:,})")
        self.layout, self.capacity_rows, self.kind, self.step_rows = layout, capacity_rows, kind, step_rows
        # host kinds live in host memory; a "device" storage on a CPU-only machine lives on the CPU learner
        self.device = torch.device(device if kind == "device" and device is not None else "cpu")
        pin = kind == "host-pinned" and torch.cuda.is_available()
        self.table = torch.empty((capacity_rows, layout.stored_width), dtype=torch.float32, device=self.device,
                                 pin_memory=pin)
        # a pageable host table asks for 2 MiB pages before its first write: a random row gather then
        # misses the TLB far less (replay.huge_pages); the reference's plain table does not
        self.huge_pages = kind == "host" and advise_huge_pages(self.table.data_ptr(), self.table.nbytes)
        self.stored = {f.name: f for f in layout.stored_fields()}
        self.batch_fields = layout.batch_fields()
        if layout.elide_next:
            slots = terminal_rows or layout.terminal_rows(capacity_rows)
            self.terminal = torch.zeros((slots, layout.terminal_row_bytes // 4), dtype=torch.float32,
                                        device=self.device)
            self.terminal_fields = {f.name: f for f in layout.terminal_fields()}
            self.slot_of_row = torch.full((capacity_rows,), -1, dtype=torch.int32, device=self.device)
            self.row_of_slot = torch.full((slots,), -1, dtype=torch.int64, device=self.device)
            self.next_slot = 0
            self._scratch: dict[str, torch.Tensor] = {}
        self.ptr = 0
        self.size = 0

    @property
    def nbytes(self) -> int:
        extra = 0
        if self.layout.elide_next:
            extra = sum(t.numel() * t.element_size() for t in (self.terminal, self.slot_of_row, self.row_of_slot))
        return self.table.numel() * 4 + extra

    # ---- write ------------------------------------------------------------------------------------
    def encode(self, parts: dict, fields, words: int) -> torch.Tensor:
        """Word rows `(n, words)` holding `parts[name]` for each of `fields` (padding bytes zero)."""
        n = parts["obs" if "obs" in parts else next(iter(parts))].shape[0]
        rows = torch.zeros((n, words), dtype=torch.float32, device=self.device)
        for f in fields:
            field_view(rows, f)[:] = parts[f.name].reshape(n, f.width).to(self.device, TORCH_DTYPES[f.dtype])
        return rows

    def add(self, *, obs, next_obs, actions, reward, done, truncated, critic=None, next_critic=None,
            terminal_mask=None, final_obs=None, final_critic=None) -> None:
        """Write one vector step of n = len(obs) rows; terminal rows get their final observations."""
        n = obs.shape[0]
        if self.layout.dims.critic_dim and (critic is None or next_critic is None):
            raise ValueError("critic and next_critic are required when critic_dim > 0")
        parts = {"obs": obs, "next_obs": next_obs, "actions": actions, "reward": reward, "done": done,
                 "truncated": truncated, "critic": critic, "next_critic": next_critic}
        mask = None
        if terminal_mask is not None:
            mask = torch.as_tensor(terminal_mask, device=self.device).bool().reshape(n)
            if mask.any():
                if final_obs is None:
                    raise ValueError("terminal_mask is set but final_obs is missing")
                if self.layout.dims.critic_dim and final_critic is None:
                    raise ValueError("terminal_mask is set but final_critic is missing")
                parts["next_obs"] = torch.where(mask[:, None], final_obs.to(self.device), next_obs.to(self.device))
                if self.layout.dims.critic_dim:
                    parts["next_critic"] = torch.where(mask[:, None], final_critic.to(self.device),
                                                       next_critic.to(self.device))
            else:
                mask = None
        if self.layout.elide_next:
            if n != self.step_rows:
                raise ValueError(f"an elided layout takes whole steps of {self.step_rows:,} rows, got {n:,}")
            start = self.ptr % self.capacity_rows
            self.add_rows(self.encode(parts, self.stored.values(), self.layout.stored_width))
            if mask is not None:
                self._keep_final(start + torch.nonzero(mask).flatten(), parts, mask)
            return
        self.add_rows(self.encode(parts, self.stored.values(), self.layout.stored_width))

    def _keep_final(self, rows: torch.Tensor, parts: dict, mask: torch.Tensor) -> None:
        """Store the final observations of terminal `rows` in the terminal table (a ring of slots)."""
        k, slots_total = rows.numel(), self.terminal.shape[0]
        slots = (self.next_slot + torch.arange(k, device=self.device)) % slots_total
        owners = self.row_of_slot[slots]
        live = owners >= 0
        if live.any() and (self.slot_of_row[owners[live]].long() == slots[live]).any():
            raise RuntimeError(f"terminal table full: more than {slots_total:,} terminal rows are live at once; "
                               f"raise layouts.TERMINAL_FRACTION's share (capacity // {slots_total:,})")
        final = self.encode({name: parts[name][mask] for name in self.terminal_fields},
                            self.terminal_fields.values(), self.terminal.shape[1])
        self.terminal[slots] = final
        self.row_of_slot[slots] = rows
        self.slot_of_row[rows] = slots.to(torch.int32)
        self.next_slot = int((self.next_slot + k) % slots_total)

    def add_rows(self, rows: torch.Tensor) -> None:
        """Write encoded rows `(n, stored_width)`; the write splits in two across the end of the table."""
        n = rows.shape[0]
        if n > self.capacity_rows:
            raise ValueError(f"one add of {n} rows exceeds capacity {self.capacity_rows}")
        start = self.ptr % self.capacity_rows
        first = min(n, self.capacity_rows - start)
        self.table[start:start + first].copy_(rows[:first], non_blocking=True)
        if first < n:
            self.table[: n - first].copy_(rows[first:], non_blocking=True)
        if self.layout.elide_next:  # overwritten rows lose their terminal entries
            self.slot_of_row[start:start + first] = -1
            self.slot_of_row[: n - first] = -1
        self.ptr += n
        self.size = min(self.size + n, self.capacity_rows)

    def prefill_pattern(self) -> None:
        """Fill every row through `add_rows`: word 0 holds the row id (int32 bits), a float ramp elsewhere.

        Every page is written (an unwritten table reads the shared zero page) and any gathered row names
        the row it came from.
        """
        ramp = torch.arange(self.layout.stored_width, dtype=torch.float32, device=self.device).mul_(0.001).add_(1.0)
        for lo in range(0, self.capacity_rows, PREFILL_CHUNK_ROWS):
            n = min(PREFILL_CHUNK_ROWS, self.capacity_rows - lo)
            rows = ramp.expand(n, -1).clone()
            rows.view(torch.int32)[:, 0] = torch.arange(lo, lo + n, dtype=torch.int32, device=self.device)
            self.add_rows(rows)

    # ---- read -------------------------------------------------------------------------------------
    def sampleable(self) -> tuple[int, int]:
        """(first row, count) of the rows a sampler may draw: the filled rows minus the newest step."""
        if self.size == 0:
            raise RuntimeError("cannot sample from an empty replay")
        count = self.size - self.step_rows
        if count <= 0:
            raise RuntimeError(f"cannot sample: {self.size:,} rows filled, the newest step ({self.step_rows:,} rows) "
                               f"is not sampleable")
        first = (self.ptr - self.size) % self.capacity_rows
        return first, count

    def gather(self, indices: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """Batch rows of `indices` into `out` `(n, batch_width)` words on this storage's device."""
        if not self.layout.elide_next:
            return torch.index_select(self.table, 0, indices, out=out)
        # On the CPU the parts go into buffers kept between calls (`_gather_scratch`); elsewhere `out=None`
        # allocates, as the device's caching allocator reuses its blocks anyway.
        s = self._gather_scratch(indices.numel()) if self.device.type == "cpu" else {}
        rows = torch.index_select(self.table, 0, indices, out=s.get("rows"))
        nidx = torch.add(indices, self.step_rows, out=s.get("next_index")).remainder_(self.capacity_rows)
        nxt = torch.index_select(self.table, 0, nidx, out=s.get("next"))
        # No host sync (a nonzero() here stalled the host every draw, so its speed set the draw's):
        # gather a terminal row for every index (slot 0 where there is none) and select per row.
        slot = torch.index_select(self.slot_of_row, 0, indices, out=s.get("slot"))
        ended = torch.ge(slot, 0, out=s.get("ended")).unsqueeze(1)
        final = torch.index_select(self.terminal, 0, slot.clamp_(min=0), out=s.get("final"))
        for f in self.batch_fields:
            dst = field_view(out, f)
            if f.name in self.stored:
                dst.copy_(field_view(rows, self.stored[f.name]))
                continue
            src = self.stored[f.name.removeprefix("next_")]
            torch.where(ended, field_view(final, self.terminal_fields[f.name]), field_view(nxt, src), out=dst)
        return out

    def _gather_scratch(self, n: int) -> dict[str, torch.Tensor]:
        """The elided gather's intermediate buffers for `n` rows, kept and reused between calls (views of
        the largest `n` asked so far), written once when made so their pages are real.

        Why: allocated per call, the two ~32 MB row buffers of a 32,768-row batch sat right at glibc's
        largest dynamic mmap threshold, so each call could map them afresh and fault ~16,000 pages inside
        the timed gather, or reuse heap memory and fault none, depending on the process's allocation
        history: host-compact's bimodal CPU gather (docs/history.md). One storage's
        gathers must not run concurrently (they share these buffers); the one-tick prefetch runs one at a
        time on its single worker."""
        s = self._scratch
        if not s or s["rows"].shape[0] < n:
            words, dev = (self.layout.stored_width, self.terminal.shape[1]), self.device
            s = {"rows": torch.empty((n, words[0]), dtype=torch.float32, device=dev),
                 "next": torch.empty((n, words[0]), dtype=torch.float32, device=dev),
                 "final": torch.empty((n, words[1]), dtype=torch.float32, device=dev),
                 "next_index": torch.empty(n, dtype=torch.int64, device=dev),
                 "slot": torch.empty(n, dtype=torch.int32, device=dev),
                 "ended": torch.empty(n, dtype=torch.bool, device=dev)}
            for t in s.values():
                t.fill_(0)  # pages are not real until written: fault them here, not inside a gather
            self._scratch = s
        return {k: t[:n] for k, t in s.items()}

    def new_batch(self, n: int, *, device: torch.device | None = None, pin_memory: bool = False) -> torch.Tensor:
        """An output buffer for `gather`, written once so its pages are real."""
        return torch.zeros((n, self.layout.batch_width), dtype=torch.float32, device=device or self.device,
                           pin_memory=pin_memory)

    def decode(self, rows: torch.Tensor, dtype: torch.dtype = torch.float32) -> Batch:
        """Named fields of batch rows, cast to the learner's dtype (scalars 1-D, padding never exposed)."""
        out = []
        for name in FIELD_ORDER:
            f = next((f for f in self.batch_fields if f.name == name), None)
            if f is None:  # critic_dim == 0
                out.append(torch.empty((rows.shape[0], 0), dtype=dtype, device=rows.device))
                continue
            view = field_view(rows, f).to(dtype)
            out.append(view[:, 0] if name in SCALAR_FIELDS else view)
        return Batch(*out)


class ReplayStorage(Storage):
    """The historical constructor: a packed (or padded, from `layout.align_bytes`) fp32 ring.

    `ReplayStorage(RowLayout, capacity, device=, pin_memory=)`; `step_rows` is the rows one `add` writes
    (num_envs), which the newest-step rule needs.
    """

    def __init__(self, layout, capacity_rows: int, *, device: str | torch.device = "cpu", pin_memory: bool = False,
                 step_rows: int = 1):
        if isinstance(layout, RowLayout):
            layout = StorageLayout("fp32-padded" if layout.align_bytes else "fp32", layout,
                                   align_bytes=layout.align_bytes)
        device = torch.device(device)
        kind = "device" if device.type != "cpu" else "host-pinned" if pin_memory else "host"
        super().__init__(layout, capacity_rows, kind=kind, device=device, step_rows=step_rows)


__all__ = ["Batch", "PREFILL_CHUNK_ROWS", "ReplayStorage", "STORAGE_KINDS", "Storage", "field_view"]
