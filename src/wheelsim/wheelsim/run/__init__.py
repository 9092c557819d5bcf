"""wheelsim run and sweep: scenario files, lock-step execution, bag recording, runs and sweeps."""
