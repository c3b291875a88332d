"""Peak GPU memory per GPU, by workload: training (`training`), diffusion (`diffusion`), serving and
running (`serving`), the parts they share (`parts`), and the check against published runs (`calibration`)."""
