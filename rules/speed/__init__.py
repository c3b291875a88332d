"""How fast: training time from FLOPs (`training`), decode and prefill throughput for serving
(`serving`), and the check against published throughputs (`calibration`)."""
