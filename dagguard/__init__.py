"""dagguard: stops Apache Airflow pipelines from flooding schedulers and duplicating data."""

__version__ = "0.1.0"
