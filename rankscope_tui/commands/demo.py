"""`rankscope demo`: write the built-in synthetic demo data set."""

from __future__ import annotations

import os

from ..kernel.errors import InputError


def register(sub) -> None:
    de = sub.add_parser("demo", help="write the built-in synthetic demo data set")
    de.add_argument("--out", required=True, metavar="DIR")
    de.add_argument("--seed", type=int, default=7)
    de.set_defaults(func=run)


def run(args) -> int:
    from ..demo import FILES, write_demo

    paths = write_demo_dir(args.out, write_demo, FILES, seed=args.seed)
    for role, p in paths.items():
        print(f"{role}: {p}")
    print("synthetic demo data written by rankscope's generator")
    return 0


def write_demo_dir(out: str, write_demo, files: dict, seed: int = 7) -> dict:
    """Write the demo (``demo.write_demo``, writing ``demo.FILES``; passed in, as only the demo
    commands import the generator) into ``out`` (created when missing) without touching anyone's
    files: ``out`` must be new, empty, or a previous demo (``kernel.provenance.check_demo_dir``).
    The files are generated in a temporary directory inside ``out`` and moved into place,
    the marker last; ``{role: path}`` as ``demo.write_demo`` returns it."""
    import shutil
    import tempfile

    from ..kernel.inputs.files import sha256_of
    from ..kernel.inputs.provenance import MARKER, check_demo_dir
    from ..kernel.report.output import TEMP_SUFFIX, _temp_prefix, remove_stale_temps

    if os.path.lexists(out) and not os.path.isdir(out):
        raise InputError("exists and is not a directory", out)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the directory: {exc.strerror or exc}", out) from None
    remove_stale_temps(out)
    check_demo_dir(out)  # before any work: a directory of someone's own files is refused now
    try:
        tmp = tempfile.mkdtemp(prefix=_temp_prefix(), suffix=TEMP_SUFFIX, dir=out)
    except OSError as exc:
        raise InputError(f"cannot write into the directory: {exc.strerror or exc}", out) from None
    try:
        made = write_demo(tmp, seed=seed)
        names = sorted(files.values(), key=lambda n: n == MARKER)  # the marker last
        check_demo_dir(out, {n: sha256_of(os.path.join(tmp, n)) for n in names})
        for n in names:
            os.replace(os.path.join(tmp, n), os.path.join(out, n))
    except OSError as exc:
        raise InputError(f"cannot write the demo: {exc.strerror or exc}", out) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {role: type(p)(os.path.join(out, os.path.basename(p))) for role, p in made.items()}

