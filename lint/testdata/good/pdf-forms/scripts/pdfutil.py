"""Shared helpers of the form scripts."""


def open_form(path):
    return path
