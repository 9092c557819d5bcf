"""The `wheelsim` command line tool: headless scenario runs and parameter sweeps."""
