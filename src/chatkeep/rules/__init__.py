"""Pure rules of the storage model: no I/O, inputs never mutated, "no change" returns the input."""
