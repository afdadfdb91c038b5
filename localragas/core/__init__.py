"""Foundation: errors, atomic writes, state paths, printable text, offline switches, input bounds, KEY=VALUE
parsing, numbers as text, reply schemas, sentence splitting, plugin entry points, a package's lazy public names.
Imports no other layer."""
