"""Fill a PDF form with JSON values."""
import sys

print(sys.argv[1:])
