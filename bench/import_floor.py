# The floor of the bench's --version figures. MIT License.
"""``python3 -m import_floor NAME...`` (from bench/): import these modules, nothing more."""

import sys

if __name__ == "__main__":
    for name in sys.argv[1:]:
        __import__(name)
