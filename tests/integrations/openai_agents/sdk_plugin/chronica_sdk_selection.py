"""Which of the OpenAI Agents SDK's own tests run on ChronicaSession, and which do not.

Plain data (no import beyond the standard library): the plugin reads it, and so does
the test of chronica's suite that starts the run.
"""

SDK_VERSION = "0.24.0"
"""The openai-agents release whose tests are run: its source distribution on PyPI
carries them. The installed release must be the same one."""

# The SDK's test modules that exercise a session: its session and limit tests and the
# runner tests that use SQLiteSession (runner, streaming, resume, tool failures, max
# turns, cancellation, compaction), and the encryption wrapper over a session.
MODULES = [
    "tests/memory/test_session.py",
    "tests/memory/test_session_limit.py",
    "tests/test_agent_runner.py",
    "tests/test_agent_runner_streamed.py",
    "tests/test_run_impl_resume_paths.py",
    "tests/test_tool_batch_failure_history.py",
    "tests/test_native_tool_failure_history.py",
    "tests/test_tool_failure_boundaries.py",
    "tests/test_max_turns.py",
    "tests/test_soft_cancel.py",
    "tests/test_programmatic_tool_calling.py",
    "tests/memory/test_compaction_suffix.py",
    "tests/memory/test_compaction_model_visibility.py",
    "tests/memory/test_openai_responses_compaction_session.py",
    "tests/extensions/memory/test_encrypt_session.py",
]

_WORKER_CONNECTIONS = "SQLiteSession's per-worker-thread sqlite3 connections and their cleanup"
_CORRUPT_ROWS = "rows of invalid JSON written straight into SQLiteSession's own table"
_OWN_TRANSACTION = (
    "a failing sqlite3 connection planted in SQLiteSession to roll back its transaction"
)

_TRIGGER = (
    "a trigger created with sqlite3 on SQLiteSession's own table agent_messages, to make its"
    " insert fail (ChronicaSession's compaction is one write of chronica's: it lands whole or"
    " not at all, tests/integrations/openai_agents/test_session_compaction.py)"
)
_INSERT_ITEMS = "holds SQLiteSession's worker thread inside its private _insert_items before commit"

_VALIDATED_POP = (
    "SQLiteSession's private _pop_item_with_validation, which checks the popped item inside "
    "its own transaction and rolls it back"
)
_COMPACTION = "TestOpenAIResponsesCompactionSession::"

# Module -> test (with its parameters, or without them for all; "" for the whole
# module) -> why it is about SQLite internals and says nothing about a Session.
# The only tests left out.
_DESELECTED_BY_MODULE: dict[str, dict[str, str]] = {
    "tests/memory/test_compaction_suffix.py": {
        "test_suffix_transaction_rolls_back_failed_insert[sqlite]": _TRIGGER,
        "test_failed_encrypted_suffix_transaction_preserves_original_tokens[sqlite-False]": (
            _TRIGGER
        ),
        "test_failed_encrypted_suffix_transaction_preserves_original_tokens[sqlite-True]": (
            _TRIGGER
        ),
        "test_cancelled_suffix_transaction_settles_before_newer_append[sqlite]": _INSERT_ITEMS,
    },
    "tests/memory/test_session.py": {
        "test_sqlite_session_close_closes_worker_thread_connections": _WORKER_CONNECTIONS,
        "test_sqlite_session_reaps_connections_from_exited_worker_threads": _WORKER_CONNECTIONS,
        "test_sqlite_session_closes_retired_connections_before_the_next_allocation": (
            _WORKER_CONNECTIONS
        ),
        "test_sqlite_session_keeps_connections_of_live_worker_threads": _WORKER_CONNECTIONS,
        "test_sqlite_session_close_retries_quarantined_connection": _WORKER_CONNECTIONS,
        "test_sqlite_session_closed_rejects_empty_add_items": (
            "SQLiteSession.close() closes its own sqlite3 connections and refuses writes "
            "after; chronica's connections belong to Django"
        ),
        "test_sqlite_session_file_lock_is_shared_across_instances": (
            "SQLiteSession's process-wide lock per database file"
        ),
        "test_sqlite_session_pop_item_skips_corrupt_most_recent": _CORRUPT_ROWS,
        "test_sqlite_session_pop_item_returns_none_after_dropping_only_corrupt_rows": (
            _CORRUPT_ROWS
        ),
        "test_sqlite_session_get_items_limit_skips_corrupt_newest_rows": _CORRUPT_ROWS,
        "test_sqlite_session_get_items_session_settings_limit_skips_corrupt_rows": _CORRUPT_ROWS,
        "test_sqlite_session_failed_add_items_releases_write_lock": _OWN_TRANSACTION,
        "test_sqlite_session_failed_clear_session_rolls_back": _OWN_TRANSACTION,
        "test_sqlite_session_failed_pop_item_releases_write_lock": _OWN_TRANSACTION,
        "test_sqlite_session_rollback_failure_evicts_connection": _OWN_TRANSACTION,
        "test_sqlite_session_post_commit_cancellation_propagates_after_known_outcome": (
            "pauses the commit of a sqlite3 connection planted in SQLiteSession (the same "
            "promise of ChronicaSession is tested in tests/integrations/openai_agents)"
        ),
    },
    "tests/memory/test_openai_responses_compaction_session.py": {
        _COMPACTION + "test_settled_pop_failure_invalidates_response_chain": _OWN_TRANSACTION,
        _COMPACTION + "test_settled_clear_failure_invalidates_response_chain": _OWN_TRANSACTION,
    },
    "tests/extensions/memory/test_encrypt_session.py": {
        "test_encrypted_pop_wrong_key_preserves_recoverable_history": _VALIDATED_POP,
        "test_encrypted_pop_rechecks_authentication_after_expired_tail": _VALIDATED_POP,
        "test_encrypted_pop_authentication_is_atomic_with_concurrent_mutations": _VALIDATED_POP,
        "test_encrypted_pop_wrong_key_preserves_row_identity": _VALIDATED_POP,
        "test_encrypted_pop_cancellation_waits_for_authentication_rollback": _VALIDATED_POP,
    },
    "tests/test_run_impl_resume_paths.py": {
        "test_handoff_resume_after_cancelled_compaction_commits": _INSERT_ITEMS,
    },
}

DESELECTED: dict[str, str] = {
    f"{module}::{test}" if test else module: reason
    for module, tests in _DESELECTED_BY_MODULE.items()
    for test, reason in tests.items()
}
"""Node ID (or one without its parameters, or a module) -> reason."""
