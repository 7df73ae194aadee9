// Package backendtest is the conformance suite of vfs/backend: every
// backend's tests call Run with a function that opens a fresh, empty store,
// and the suite checks the contract's semantics on it (reads and writes,
// read-your-writes inside a transaction, cursors across page boundaries,
// nested buckets, sequences, rollback, Batch with failing and concurrent
// members, snapshot isolation, key limits, errors and cancellation).
//
// It is the shape of litestream's RunWithReplicaClient: the suite is
// written once, against the contract, so bbolt and PostgreSQL cannot drift
// apart in what the item store above them relies on. Cases assert outcomes
// only; how a backend gets there (pages, round trips, locks) is its own.
package backendtest
