#!/usr/bin/env python3
"""Print the fields of a PDF form."""
import sys

from pdfutil import open_form

print(open_form(sys.argv[1]))
