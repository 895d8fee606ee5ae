# version 2
def solve():
    return True
