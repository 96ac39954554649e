"""The spill codec (`formats/_spill_codec.py`) against the canonical JSON it replaced: CPU
seconds to encode and decode every run of a folder (best of `--repeat`), the bytes written, and
whether each run decoded encodes to the JSON bytes of the run read.

    python benchmarks/spill_codec.py [FOLDER] [--repeat 7]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import msgspec

from agentlens.formats import _spill_codec as codec
from agentlens.formats.stream import read_paths
from agentlens.trajectory import Trajectory
from cpu_timing import best

DEV = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "agentlens-bench-dev" / "trajectories"
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", nargs="?", default=str(DEV))
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    runs = read_paths([args.folder]).trajectories
    encoder, decoder = msgspec.json.Encoder(), msgspec.json.Decoder(Trajectory)
    as_json = [encoder.encode(t) for t in runs]
    spilled = [codec.encode(t) for t in runs]
    print(f"{len(runs)} runs; MB: JSON {sum(map(len, as_json)) / 1e6:.1f}, "
          f"codec {sum(map(len, spilled)) / 1e6:.1f}")  # fmt: skip
    print(f"encode s: JSON {best(lambda: [encoder.encode(t) for t in runs], args.repeat):.3f}, "
          f"codec {best(lambda: [codec.encode(t) for t in runs], args.repeat):.3f}")  # fmt: skip
    print(f"decode s: JSON {best(lambda: [decoder.decode(d) for d in as_json], args.repeat):.3f}, "
          f"codec {best(lambda: [codec.decode(d) for d in spilled], args.repeat):.3f}")  # fmt: skip
    same = all(encoder.encode(codec.decode(d)) == j for d, j in zip(spilled, as_json, strict=True))
    print(f"every run decoded encodes to the JSON of the run read: {same}")


if __name__ == "__main__":
    main()
