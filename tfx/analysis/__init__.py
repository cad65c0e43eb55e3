"""Analyses over kernels and hardware profiles: occupancy, resources and the like."""
