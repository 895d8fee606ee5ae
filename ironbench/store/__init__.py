"""The SQLite event store: append-only events, their hash chain, migrations and table definitions."""

from typing import TYPE_CHECKING

from ironbench import lazy_exports
from ironbench.store.chain import ChainReport, verify_chain
from ironbench.store.eventstore import EventStore, Pending, open_store
from ironbench.store.migrate import upgrade

__all__ = ["ChainReport", "EventStore", "Pending", "open_store", "upgrade", "verify_chain"]

# Named for the rest of the package, loaded on first use (importing the face stays cheap).
if TYPE_CHECKING:
    from ironbench.store.chain import COLUMNS as COLUMNS
    from ironbench.store.eventstore import Foreign as Foreign
    from ironbench.store.eventstore import open_read_only as open_read_only
    from ironbench.store.eventstore import utc_now as utc_now
    from ironbench.store.failures import sqlite_failure as sqlite_failure
    from ironbench.store.leases import Holder as Holder
    from ironbench.store.leases import Lease as Lease
    from ironbench.store.migrate import SCHEMA_HEAD as SCHEMA_HEAD
    from ironbench.store.migrate import current_revision as current_revision
    from ironbench.store.rows import Row as Row
    from ironbench.store.tables import CallCostRow as CallCostRow
    from ironbench.store.tables import CheckRow as CheckRow
    from ironbench.store.tables import DecisionRow as DecisionRow
    from ironbench.store.tables import FailureCauseRow as FailureCauseRow
    from ironbench.store.tables import GateLookRow as GateLookRow
    from ironbench.store.tables import GateRow as GateRow
    from ironbench.store.tables import GatewayCallRow as GatewayCallRow
    from ironbench.store.tables import GatewayTextRow as GatewayTextRow
    from ironbench.store.tables import InvocationRow as InvocationRow
    from ironbench.store.tables import ModelCall as ModelCall
    from ironbench.store.tables import RejectionRow as RejectionRow
    from ironbench.store.tables import RunRow as RunRow
    from ironbench.store.tables import SupersededInvocationRow as SupersededInvocationRow
    from ironbench.store.tables import SurplusInvocationRow as SurplusInvocationRow
    from ironbench.store.tables import TurnRow as TurnRow
    from ironbench.store.tables import TurnScoreRow as TurnScoreRow
    from ironbench.store.tables import VariantRow as VariantRow

_EXPORTS = {
    "COLUMNS": "chain",
    "CallCostRow": "tables",
    "CheckRow": "tables",
    "DecisionRow": "tables",
    "FailureCauseRow": "tables",
    "Foreign": "eventstore",
    "GateLookRow": "tables",
    "GateRow": "tables",
    "GatewayCallRow": "tables",
    "GatewayTextRow": "tables",
    "Holder": "leases",
    "InvocationRow": "tables",
    "Lease": "leases",
    "ModelCall": "tables",
    "RejectionRow": "tables",
    "Row": "rows",
    "RunRow": "tables",
    "SCHEMA_HEAD": "migrate",
    "SupersededInvocationRow": "tables",
    "SurplusInvocationRow": "tables",
    "TurnRow": "tables",
    "TurnScoreRow": "tables",
    "VariantRow": "tables",
    "current_revision": "migrate",
    "open_read_only": "eventstore",
    "sqlite_failure": "failures",
    "utc_now": "eventstore",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ += list(_EXPORTS)
