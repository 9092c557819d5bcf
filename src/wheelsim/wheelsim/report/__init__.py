"""The evidence of a run: read its bag (:mod:`.bag_data`), compute metrics (:mod:`.metrics`),
draw plots (:mod:`.plots`) and print a one-screen summary (:mod:`.summary`)."""
