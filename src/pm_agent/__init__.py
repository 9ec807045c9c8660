"""pm-agent: an autonomous project manager for AI coding agents."""

__version__ = "0.1.0"
__all__ = ["__version__"]
