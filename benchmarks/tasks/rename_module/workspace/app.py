from helpers import shout

import report

if __name__ == "__main__":
    print(shout("hello"))
    print(report.summary(["a", "b"]))
