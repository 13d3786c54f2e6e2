VERSION = "2.3.1"
RETRIES = 4


def default_port() -> int:
    return 8080


def is_even(n: int) -> bool:
    return n % 2 == 0
