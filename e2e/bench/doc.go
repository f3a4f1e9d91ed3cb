// Package bench measures pluginkit through real child processes. It holds
// benchmarks only (run by `make bench`) and memory checks that assert
// bounds on resident memory, never on time.
package bench
