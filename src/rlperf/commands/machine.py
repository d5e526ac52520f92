"""`rlperf machine`: write asv's machine file, or print this machine's name or identity.

    rlperf machine --write [--name NAME]   # ~/.asv-machine.json entry with GPU/CUDA/torch/numba facets
    rlperf machine --print-name            # the results folder name (RLPERF_MACHINE overrides it)
    rlperf machine --json                  # the full identity as JSON
"""

from __future__ import annotations

import json

from rlperf.errors import UsageError


def add_parser(subparsers, name: str, help_text: str):
    p = subparsers.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--write", action="store_true", help="write this machine's entry into asv's machine file")
    p.add_argument("--name", help="machine name to write (default: `rlperf machine --print-name`)")
    p.add_argument("--print-name", action="store_true", help="print the machine name and exit")
    p.add_argument("--json", action="store_true", help="print the machine identity as JSON")
    return p


def run(args) -> int:
    from rlperf.asvtools.machine_file import write_machine_file
    from rlperf.measure.machine import check_machine_name, machine_identity, machine_name, one_line

    if args.name is not None and not args.write:
        raise UsageError("--name only applies together with --write")
    if args.name is not None and not args.name.strip():
        raise UsageError("--name must not be empty")
    if args.write:  # the name becomes results/<name>/ when asv runs under it
        check_machine_name(args.name or machine_name(), "--name" if args.name is not None else "machine name")
    if args.print_name:
        print(machine_name())
        return 0
    if args.json:
        print(json.dumps(machine_identity(), indent=2, sort_keys=True))
    if args.write:
        entry, path = write_machine_file(name=args.name)
        print(f"wrote asv machine {entry['machine']!r} to {path}")
    if not (args.json or args.write):
        print(one_line())
        print(f"name: {machine_name()}")
    return 0
