"""The catalog scanner, the entry point for tables written by any engine: :mod:`~.discovery` lists the tables,
:mod:`~.task` builds one table's events on any executor, :mod:`~.driver` delivers them in commit order and advances
the watermarks (with :mod:`~.lifecycle` for RENAMEs and DROPs), :mod:`~.sinks` says where events go, and
:mod:`~.summary` reports the scan."""
