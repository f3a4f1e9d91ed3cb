// Package e2etest holds the few helpers every e2e test package that drives
// a plugin binary through the fake host needs: the upstream schema set
// (loaded once per test binary), a test-scoped deadline, and a request
// that must succeed or must fail. Each used to be copied into every
// package's harness file.
package e2etest
