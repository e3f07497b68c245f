"""The one error of the CUDA renderer."""


class Unsupported(ValueError):
    """A construct the CUDA renderer does not lower (the message names it and its line);
    the backend cannot run the program (exit 2), as with a missing device."""
