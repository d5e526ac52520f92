"""CLI commands, one module each: add_parser(subparsers, name, help) and run(args) -> exit code."""
