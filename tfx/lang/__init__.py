"""The .tile language: lexer, parser and canonical printer."""

from tfx.lang.parser import parse_file, parse_text
from tfx.lang.printer import print_kernel, print_module

__all__ = ["parse_file", "parse_text", "print_module", "print_kernel"]
