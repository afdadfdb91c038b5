"""localragas beside the tools a team already uses: each module imports its library only when called, and names the
pip command that installs it when it is missing."""
