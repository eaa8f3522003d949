NS = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main'
SITE = 'https://docs.python.org/3/'  # no network call in this file
