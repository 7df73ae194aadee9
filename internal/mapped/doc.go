// Package mapped reads how much of a file this process's memory maps hold
// resident (/proc/self/smaps, Linux), for the tests that check ctxd lets go
// of the store pages its reads mapped.
package mapped
