"""The reference's four timed quantities (docs/workloads.md A8), with their plot labels and colours."""

CPU_SAMPLE = "cpu_sample_wall"
H2D = "cpu_sample_h2d_wall"
END_TO_END = "cpu_sample_then_h2d_wall"  # host replay -> batch on the learner GPU, its own pass
GPU_SAMPLE = "gpu_sample_wall"

LABELS = {CPU_SAMPLE: "CPU sample", H2D: "H2D", END_TO_END: "CPU sample+H2D", GPU_SAMPLE: "GPU sample"}
COLOURS = {CPU_SAMPLE: "#4C78A8", H2D: "#F58518", END_TO_END: "#E45756", GPU_SAMPLE: "#54A24B"}
# How each is timed: host work with a synchronised wall clock, device work with CUDA events.
CLOCKS = {CPU_SAMPLE: "wall", H2D: "cuda_events", END_TO_END: "wall+sync",
          GPU_SAMPLE: "cuda_events, mean of 10 draws per sample queued behind a GPU spin (device time only)"}
