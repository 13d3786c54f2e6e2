from util import greet

print(greet("artoo"))
