"""The ``cardtable`` command line: the server, the terminal game, tournaments and the text renderer."""
