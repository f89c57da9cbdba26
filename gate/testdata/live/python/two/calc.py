"""The code under test; this variant (two) is copied over the project by TestLiveEcosystems."""


def add(a, b):
    return a - b


def mul(a, b):
    return a + b


def sub(a, b):
    return a - b
