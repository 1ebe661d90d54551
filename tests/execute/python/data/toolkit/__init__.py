"""A package of the code's own: run_python imports it from the working directory."""

from .stats import mean

VERSION = "1.0"
