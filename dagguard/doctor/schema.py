"""Which Airflow release made this metadata database: alembic_version → Airflow version.

Doctor runs without Airflow installed, so the revision chain is copied here from Airflow
3.3.2's `airflow/migrations/versions/` (revision and `airflow_version` of each file, oldest
first). Supported: a finished migration to Airflow 3.0 through 3.3, i.e. the 3.0.0 head
(29ce7909c52b) and every later revision up to the 3.3.0 head (d2f4e1b3c5a7).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import inspect, select, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from dagguard.doctor.errors import NotAirflowError, UnsupportedSchemaError

# (alembic revision, Airflow version that introduced it), in migration order.
REVISION_CHAIN: tuple[tuple[str, str], ...] = (
    ("4bc4d934e2bc", "2.6.2"),
    ("937cbd173ca1", "2.7.0"),
    ("788397e78828", "2.7.0"),
    ("405de8318b3a", "2.7.0"),
    ("375a816bbbf4", "2.8.0"),
    ("f7bf2a57d0a6", "2.8.0"),
    ("bd5dfbe21f88", "2.8.0"),
    ("10b52ebd31f7", "2.8.0"),
    ("88344c1d9134", "2.8.1"),
    ("1fd565369930", "2.9.0"),
    ("d75389605139", "2.9.0"),
    ("ab34f260b71c", "2.9.0"),
    ("8e1c784a4fc7", "2.9.0"),
    ("b4078ac230a1", "2.9.0"),
    ("ee1467d4aa35", "2.9.0"),
    ("1949afb29106", "2.9.0"),
    ("bff083ad727d", "2.9.2"),
    ("686269002441", "2.9.2"),
    ("0fd0c178cbe8", "2.10.0"),
    ("677fdbb7fc54", "2.10.0"),
    ("c4602ba06b4b", "2.10.0"),
    ("d482b7261ff9", "2.10.0"),
    ("05e19f3176be", "2.10.0"),
    ("ec3471c1e067", "2.10.0"),
    ("41b3bc7c0272", "2.10.0"),
    ("8684e37832e6", "2.10.0"),
    ("22ed7efa9da2", "2.10.0"),
    ("5f2621c13b39", "2.10.3"),
    ("044f740568ec", "3.0.0"),
    ("d0f1c55954fa", "3.0.0"),
    ("0bfc26bc256e", "3.0.0"),
    ("a2c32e6c7729", "3.0.0"),
    ("1cdc775ca98f", "3.0.0"),
    ("522625f6d606", "3.0.0"),
    ("16cbcb1c8c36", "3.0.0"),
    ("44eabb1904b4", "3.0.0"),
    ("0d9e73a75ee4", "3.0.0"),
    ("c3389cd7793f", "3.0.0"),
    ("5a5d66100783", "3.0.0"),
    ("fb2d4922cd79", "3.0.0"),
    ("3a8972ecb8f9", "3.0.0"),
    ("05234396c6fc", "3.0.0"),
    ("d59cbbef95eb", "3.0.0"),
    ("486ac7936b78", "3.0.0"),
    ("5f57a45b8433", "3.0.0"),
    ("d8cd3297971e", "3.0.0"),
    ("d03e4a635aa3", "3.0.0"),
    ("2b47dc6bc8df", "3.0.0"),
    ("9fc3fc5de720", "3.0.0"),
    ("eed27faa34e3", "3.0.0"),
    ("e229247a6cb1", "3.0.0"),
    ("038dc8bc6284", "3.0.0"),
    ("237cef8dfea1", "3.0.0"),
    ("5c9c0231baa2", "3.0.0"),
    ("38770795785f", "3.0.0"),
    ("e39a26ac59f6", "3.0.0"),
    ("8ea135928435", "3.0.0"),
    ("33b04e4bfa19", "3.0.0"),
    ("6a9e7a527a88", "3.0.0"),
    ("e00344393f31", "3.0.0"),
    ("7645189f3479", "3.0.0"),
    ("cf87489a35df", "3.0.0"),
    ("16f7f5ee874e", "3.0.0"),
    ("d469d27e2a64", "3.0.0"),
    ("be2cc2f742cf", "3.0.0"),
    ("ec62e120484d", "3.0.0"),
    ("0e9519b56710", "3.0.0"),
    ("959e216a3abb", "3.0.0"),
    ("29ce7909c52b", "3.0.0"),
    ("fe199e1abd77", "3.0.3"),
    ("dfee8bd5d574", "3.1.0"),
    ("0242ac120002", "3.1.0"),
    ("3ac9e5732b1f", "3.1.0"),
    ("583e80dfcef4", "3.1.0"),
    ("66a7743fe20e", "3.1.0"),
    ("ffdb0566c7c0", "3.1.0"),
    ("40f7c30a228b", "3.1.0"),
    ("09fa89ba1710", "3.1.0"),
    ("f56f68b9e02f", "3.1.0"),
    ("3bda03debd04", "3.1.0"),
    ("808787349f22", "3.1.0"),
    ("a169942745c2", "3.1.0"),
    ("7582ea3f3dd5", "3.1.0"),
    ("a3c7f2b18d4e", "3.1.0"),
    ("eaf332f43c7c", "3.1.0"),
    ("cc92b33c6709", "3.1.0"),
    ("82dbd68e6171", "3.1.8"),
    ("509b94a1042d", "3.1.8"),
    ("15d84ca19038", "3.2.0"),
    ("ab6dc0c82d0e", "3.2.0"),
    ("1b2c3d4e5f6g", "3.2.0"),
    ("5cc8117e9285", "3.2.0"),
    ("69ddce9a7247", "3.2.0"),
    ("b87d2135fa50", "3.2.0"),
    ("e812941398f4", "3.2.0"),
    ("665854ef0536", "3.2.0"),
    ("b12d4f98a91e", "3.2.0"),
    ("edc4f85a4619", "3.2.0"),
    ("c47f2e1ab9d4", "3.2.0"),
    ("0b112f49112d", "3.2.0"),
    ("e79fc784f145", "3.2.0"),
    ("55297ae24532", "3.2.0"),
    ("a5a3e5eb9b8d", "3.2.0"),
    ("53ff648b8a26", "3.2.0"),
    ("f8c9d7e6b5a4", "3.2.0"),
    ("e42d9fcd10d9", "3.2.0"),
    ("134de42d3cb0", "3.2.0"),
    ("6222ce48e289", "3.2.0"),
    ("888b59e02a5b", "3.2.0"),
    ("1d6611b6ab7c", "3.2.0"),
    ("a4c2d171ae18", "3.3.0"),
    ("9fabad868fdb", "3.3.0"),
    ("fde9ed84d07b", "3.3.0"),
    ("b8f3e4a1d2c9", "3.3.0"),
    ("a7f3b2c1d4e5", "3.3.0"),
    ("a1b2c3d4e5f6", "3.3.0"),
    ("acc215baed80", "3.3.0"),
    ("8812eb67b63c", "3.3.0"),
    ("a7e6d4c3b2f1", "3.3.0"),
    ("c9d4e5f6a7b8", "3.3.0"),
    ("c20871fbf23a", "3.3.0"),
    ("dd5f3a8e2b91", "3.3.0"),
    ("9ff64e1c35d3", "3.3.0"),
    ("d2f4e1b3c5a7", "3.3.0"),
)

FIRST_SUPPORTED_REVISION = "29ce7909c52b"  # head of Airflow 3.0.0 (also 3.0.1, 3.0.2)
LAST_SUPPORTED_REVISION = "d2f4e1b3c5a7"  # head of Airflow 3.3.0 (also 3.3.1, 3.3.2)
SUPPORTED_RANGE = "Airflow 3.0 to 3.3"

_POSITION = {revision: index for index, (revision, _) in enumerate(REVISION_CHAIN)}
_VERSION = dict(REVISION_CHAIN)


@dataclass(frozen=True)
class SchemaInfo:
    """The schema revision of a metadata database and the Airflow release it belongs to."""

    revision: str
    airflow_version: str

    @property
    def minor(self) -> tuple[int, int]:
        """(major, minor) of the Airflow version, for feature switches such as dag_run.created_at."""
        major, minor = self.airflow_version.split(".")[:2]
        return int(major), int(minor)


def schema_for_revision(revision: str) -> SchemaInfo:
    """Map an alembic revision to a supported schema, or raise saying why it is not supported."""
    if revision not in _POSITION:
        raise UnsupportedSchemaError(
            f"unknown alembic revision '{revision}': not a release of {SUPPORTED_RANGE} "
            "(a newer Airflow, a development build, or not Airflow's migrations); "
            "doctor supports Airflow 3.0 to 3.3"
        )
    position = _POSITION[revision]
    version = _VERSION[revision]
    if position < _POSITION[FIRST_SUPPORTED_REVISION]:
        if version.startswith("3."):
            raise UnsupportedSchemaError(
                f"schema revision '{revision}' is part-way through the Airflow {version} migration; "
                "finish it with `airflow db migrate` (doctor supports Airflow 3.0 to 3.3)"
            )
        raise UnsupportedSchemaError(
            f"schema revision '{revision}' is Airflow {version}, older than Airflow 3.0: "
            "doctor supports Airflow 3.0 to 3.3, where backfills live in the metadata database"
        )
    return SchemaInfo(revision=revision, airflow_version=version)


def detect_schema(conn: Connection) -> SchemaInfo:
    """Read alembic_version and return the supported schema it names, or raise a DoctorError."""
    inspector = inspect(conn)
    if not inspector.has_table("alembic_version"):
        raise NotAirflowError(
            "not an Airflow metadata database: it has no alembic_version table "
            "(is the URL pointing at the right database? run `airflow db migrate` to create one)"
        )
    try:
        revisions = conn.execute(select(text("version_num")).select_from(text("alembic_version"))).scalars().all()
    except DBAPIError as exc:
        raise NotAirflowError(f"not an Airflow metadata database: cannot read alembic_version ({_first_line(exc)})") from None
    if len(revisions) != 1:
        raise NotAirflowError(
            f"not an Airflow metadata database: alembic_version holds {len(revisions)} revisions, expected 1"
        )
    return schema_for_revision(str(revisions[0]))


def _first_line(exc: BaseException) -> str:
    original = getattr(exc, "orig", None) or exc
    return str(original).strip().splitlines()[0] if str(original).strip() else type(original).__name__
