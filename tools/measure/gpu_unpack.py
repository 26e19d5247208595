"""Unpack the gpu-kit's pieces while they are still arriving (on the lent GPU machine).

Usage: setsid python3 gpu_unpack.py COUNT PARTS_DIR SHA256 DEST &

Reads PARTS_DIR/p00, p01, ... in order, each once it exists (a piece is moved into place whole), streams them
through xz and tar into DEST, checks the SHA-256 of the joined stream, and writes DEST/unpack.done (or
DEST/unpack.failed with the error). Each piece is deleted once read.
"""

import hashlib
import io
import sys
import tarfile
import time
from pathlib import Path


class Pieces(io.RawIOBase):
    def __init__(self, count: int, folder: Path):
        self.count, self.folder, self.index, self.current = count, folder, 0, None
        self.digest = hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while True:
            if self.current is None:
                if self.index == self.count:
                    return 0
                path = self.folder / f"p{self.index:02d}"
                while not path.exists():
                    time.sleep(0.2)
                self.current, self.path = open(path, "rb"), path
            n = self.current.readinto(buffer)
            if n:
                self.digest.update(memoryview(buffer)[:n])
                return n
            self.current.close()
            self.path.unlink()
            self.current, self.index = None, self.index + 1


def main() -> int:
    count, folder, sha, dest = int(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
    start = time.time()
    try:
        pieces = Pieces(count, folder)
        with tarfile.open(fileobj=io.BufferedReader(pieces, 1 << 20), mode="r|xz") as archive:
            archive.extractall(dest)
        if pieces.digest.hexdigest() != sha:
            raise RuntimeError(f"checksum {pieces.digest.hexdigest()} != {sha}")
        (dest / "unpack.done").write_text(f"{time.time() - start:.1f} s\n")
    except Exception as err:  # noqa: BLE001
        (dest / "unpack.failed").write_text(repr(err))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
