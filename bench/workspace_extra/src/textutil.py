def shout(text: str) -> str:
    return text.upper() + "!"


def slugify(text: str) -> str:
    return "-".join(text.lower().split())


def initials(name: str) -> str:
    return "".join(part[0].upper() for part in name.split())
