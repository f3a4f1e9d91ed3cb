// Package pgtest gives the tests of any module a real PostgreSQL: the DSN
// of the cluster scripts/postgres.sh started (skipping, or failing under
// CI=true, when there is none), a fresh schema per test, a server restart
// in the middle of a test, and pg_terminate_backend on chosen sessions.
// It never mocks the database.
package pgtest
