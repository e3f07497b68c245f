"""The reference meaning: the logical interpreter and the SIMT simulator of physical plans."""
