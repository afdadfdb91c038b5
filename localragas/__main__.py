"""`python -m localragas ...`: the same as the `localragas` command."""
from .cli import main

if __name__ == "__main__":
    main()
