class User:
    name: str = ""
