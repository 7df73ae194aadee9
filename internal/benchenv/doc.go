// Package benchenv reads the settings benchmarks take from the environment
// (CTXD_BENCH_*), failing the benchmark on a malformed one rather than
// measuring something other than what was asked.
package benchenv
