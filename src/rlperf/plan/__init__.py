"""`rlperf plan`: rank replay placements for a task, capacity and GPU count on one machine's ceilings.

candidates (what can be chosen) -> ceilings (what the machine can do) -> model (bytes, memory, time
per learner iteration, feasibility) -> ranking (sorted rows with the last measured figure beside each).
Torch-free unless the ceilings are measured on the spot.
"""

from rlperf.plan.candidates import Candidate, candidates
from rlperf.plan.ceilings import MachineCeilings
from rlperf.plan.ranking import PlanRow, plan

__all__ = ["Candidate", "MachineCeilings", "PlanRow", "candidates", "plan"]
