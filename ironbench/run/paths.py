"""Where a run's files go: its output directory and its event store."""

from dataclasses import dataclass
from pathlib import Path

STORE_NAME = "ironbench.db"


@dataclass(frozen=True)
class RunPaths:
    out_dir: Path
    store_path: Path

    @classmethod
    def resolve(cls, out: str | Path, store: str | Path | None) -> "RunPaths":
        out_dir = Path(out)
        return cls(out_dir, Path(store) if store else out_dir / STORE_NAME)
