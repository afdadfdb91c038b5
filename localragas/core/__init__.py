"""Foundation: errors, atomic writes, state paths, printable text, offline switches, input bounds, KEY=VALUE
parsing, numbers as text, reply schemas, sentence splitting, plugin entry points. Imports no other layer."""
