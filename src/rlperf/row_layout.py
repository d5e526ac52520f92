"""The packed replay row: one object owns the field order, widths and offsets (docs/workloads.md A1).

It sits below `workload.py` (a workload derives its row from it) and below `replay/`, which stores it."""

from __future__ import annotations

from dataclasses import dataclass

FLOAT32_BYTES = 4
FIELD_ORDER = ("obs", "next_obs", "actions", "reward", "done", "truncated", "critic", "next_critic")
SCALAR_FIELDS = ("reward", "done", "truncated")


@dataclass(frozen=True)
class RowLayout:
    """Packed float32 row `[obs | next_obs | actions | reward | done | truncated | critic | next_critic]`.

    `align_bytes` pads the stored row to a multiple of that many bytes (16 lets PyTorch's vectorised
    gather kick in: 930 -> 932 floats); consumers only ever see the first `width` columns.
    """

    obs_dim: int
    action_dim: int
    critic_dim: int
    align_bytes: int = 0

    def __post_init__(self):
        for name in ("obs_dim", "action_dim"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.critic_dim < 0:
            raise ValueError(f"critic_dim must be >= 0, got {self.critic_dim}")
        if self.align_bytes and self.align_bytes % FLOAT32_BYTES:
            raise ValueError(f"align_bytes must be a multiple of {FLOAT32_BYTES}, got {self.align_bytes}")

    def widths(self) -> dict[str, int]:
        o, a, c = self.obs_dim, self.action_dim, self.critic_dim
        return {"obs": o, "next_obs": o, "actions": a, "reward": 1, "done": 1, "truncated": 1,
                "critic": c, "next_critic": c}

    def offsets(self) -> dict[str, tuple[int, int]]:
        """field -> (start column, stop column), stop exclusive, in FIELD_ORDER."""
        out, col = {}, 0
        for name, width in self.widths().items():
            out[name] = (col, col + width)
            col += width
        return out

    @property
    def width(self) -> int:
        """Logical row width W = 2*O + A + 3 + 2*C floats."""
        return 2 * self.obs_dim + self.action_dim + 3 + 2 * self.critic_dim

    @property
    def stored_width(self) -> int:
        """Width as stored, padded up to a multiple of align_bytes."""
        if not self.align_bytes:
            return self.width
        per = self.align_bytes // FLOAT32_BYTES
        return -(-self.width // per) * per

    @property
    def row_bytes(self) -> int:
        return self.width * FLOAT32_BYTES

    @property
    def batch_width(self) -> int:
        """A batch row as gathered (the packed row carries every field): same as stored."""
        return self.stored_width

    @property
    def batch_row_bytes(self) -> int:
        return self.stored_row_bytes

    @property
    def stored_row_bytes(self) -> int:
        return self.stored_width * FLOAT32_BYTES

    def padded(self, align_bytes: int = 16) -> "RowLayout":
        return RowLayout(self.obs_dim, self.action_dim, self.critic_dim, align_bytes)
